// Snapshots read from the mirror's object database: which files count, where they came
// from, and hostile repositories (symlinks out of the tree, submodules, a huge blob,
// thousands of files). Also the directory reader the CLI uses on a checkout.
#include "gitsource/snapshot.h"

#include <gtest/gtest.h>

#include "fmt/format.h"
#include "gitsource/git_source.h"
#include "tests/gitsource/fixture.h"

namespace tr::gitsource::testing {
namespace {

std::string Data(const std::string& content) {
  return fmt::format("data {}\n{}\n", content.size(), content);
}

class SnapshotTest : public UpstreamTest {
 protected:
  // Appends a commit to main with `modifications` (fast-import "M" lines, with any inline
  // data) on top of the current tip, and returns its id.
  std::string ImportOnMain(const std::string& modifications, const std::string& blobs = "") {
    upstream_.FastImport(fmt::format(
        "{}commit refs/heads/main\ncommitter Test Author <author@example.com> 1700000000 +0000\n"
        "{}from {}\n{}\n",
        blobs, Data("hostile"), desired_tip_, modifications));
    desired_tip_ = upstream_.Tip("main");
    return desired_tip_;
  }

  absl::StatusOr<ProfileSnapshot> PollAndRead(GitSourceConfig config) {
    auto source = OpenSource(config);
    if (source == nullptr) return absl::InternalError("no source");
    absl::StatusOr<RemoteHead> head = source->Poll();
    if (!head.ok()) return head.status();
    return source->Snapshot(head->commit);
  }

  GitSourceConfig FileConfig() const { return Config("file://" + upstream_.bare().string()); }
};

std::vector<std::string> Paths(const ProfileSnapshot& snapshot) {
  std::vector<std::string> paths;
  for (const core::SourceFile& f : snapshot.files) paths.push_back(f.path);
  return paths;
}

TEST_F(SnapshotTest, ReadsProfilesAndDefaultsWithTheirOrigin) {
  CommitDesired({{"clusters/staging.yaml", "b\n"}, {"README.md", "x"}}, "Add staging\n\nbody");
  absl::StatusOr<ProfileSnapshot> snapshot = PollAndRead(FileConfig());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(
      Paths(*snapshot),
      (std::vector<std::string>{"clusters/prod.yaml", "clusters/staging.yaml", "reconciler.yaml"}));
  EXPECT_EQ(snapshot->files[0].content, kProdProfile);
  EXPECT_EQ(snapshot->files[2].content, kDefaults);
  EXPECT_EQ(snapshot->origin.commit, desired_tip_);
  EXPECT_EQ(snapshot->origin.author, "Test Author <author@example.com>");
  EXPECT_EQ(snapshot->origin.message, "Add staging\n\nbody\n");
  EXPECT_EQ(snapshot->origin.signer, "");
}

TEST_F(SnapshotTest, OlderCommitsStayReadable) {
  const std::string first = desired_tip_;
  CommitDesired({{"clusters/prod.yaml", "changed\n"}}, "change");
  auto source = OpenSource(FileConfig());
  ASSERT_TRUE(source->Poll().ok());
  absl::StatusOr<ProfileSnapshot> old = source->Snapshot(first);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->files[0].content, kProdProfile);
}

TEST_F(SnapshotTest, BadAndUnknownCommitIds) {
  auto source = OpenSource(FileConfig());
  ASSERT_TRUE(source->Poll().ok());
  EXPECT_EQ(source->Snapshot("HEAD").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source->Snapshot(desired_tip_.substr(0, 12)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source->Snapshot(std::string(40, 'a')).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SnapshotTest, SymlinksSubmodulesAndOtherPlacesAreIgnored) {
  ImportOnMain("M 120000 inline clusters/evil.yaml\n" + Data("../../../../etc/passwd") +
               "M 120000 inline reconciler.yaml\n" + Data("/etc/shadow") +
               "M 160000 0123456789012345678901234567890123456789 clusters/module.yaml\n"
               "M 100644 inline clusters/nested/deep.yaml\n" +
               Data("nested") + "M 100644 inline docs/other.yaml\n" + Data("elsewhere") +
               "M 100644 inline clusters/notes.txt\n" + Data("not yaml") +
               "M 100755 inline clusters/exec.yaml\n" + Data("executable is still a file"));
  absl::StatusOr<ProfileSnapshot> snapshot = PollAndRead(FileConfig());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(Paths(*snapshot),
            (std::vector<std::string>{"clusters/exec.yaml", "clusters/prod.yaml"}));
}

TEST_F(SnapshotTest, ClustersDirectoryAsSymlinkIsIgnored) {
  ImportOnMain("D clusters\nM 120000 inline clusters\n" + Data("/etc"));
  absl::StatusOr<ProfileSnapshot> snapshot = PollAndRead(FileConfig());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(Paths(*snapshot), (std::vector<std::string>{"reconciler.yaml"}));
}

TEST_F(SnapshotTest, HugeBlobIsReportedOversizedWithoutBeingRead) {
  ImportOnMain("M 100644 :1 clusters/huge.yaml\n",
               "blob\nmark :1\n" + Data(std::string(3 << 20, 'a')));
  GitSourceConfig config = FileConfig();
  config.snapshot_limits.max_file_bytes = 1 << 20;
  absl::StatusOr<ProfileSnapshot> snapshot = PollAndRead(config);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ASSERT_EQ(Paths(*snapshot), (std::vector<std::string>{"clusters/huge.yaml", "clusters/prod.yaml",
                                                        "reconciler.yaml"}));
  EXPECT_TRUE(snapshot->files[0].oversized);
  EXPECT_TRUE(snapshot->files[0].content.empty());
  EXPECT_FALSE(snapshot->files[1].oversized);
}

TEST_F(SnapshotTest, ThousandsOfProfilesPastTheCapAreRefused) {
  std::string lines;
  for (int i = 0; i < 6000; ++i) lines += fmt::format("M 100644 :1 clusters/c{:05}.yaml\n", i);
  ImportOnMain(lines, "blob\nmark :1\n" + Data("kind: x"));
  GitSourceConfig config = FileConfig();
  config.snapshot_limits.max_files = 5000;
  EXPECT_EQ(PollAndRead(config).status().code(), absl::StatusCode::kFailedPrecondition);
  config.snapshot_limits.max_files = 10000;
  config.state_dir = tmp_ / "state-larger-cap";
  absl::StatusOr<ProfileSnapshot> snapshot = PollAndRead(config);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(snapshot->files.size(), 6002u);
}

TEST_F(SnapshotTest, DirectoryReaderMatchesTheCommitReader) {
  absl::StatusOr<ProfileSnapshot> from_git = PollAndRead(FileConfig());
  absl::StatusOr<ProfileSnapshot> from_dir = ReadDirectorySnapshot(upstream_.work());
  ASSERT_TRUE(from_git.ok()) << from_git.status();
  ASSERT_TRUE(from_dir.ok()) << from_dir.status();
  EXPECT_EQ(Paths(*from_git), Paths(*from_dir));
  for (std::size_t i = 0; i < from_dir->files.size(); ++i) {
    EXPECT_EQ(from_git->files[i].content, from_dir->files[i].content);
  }
}

}  // namespace
}  // namespace tr::gitsource::testing
