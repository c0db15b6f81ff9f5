// Snapshots read from the mirror's object database: which files count, where they came
// from, and hostile repositories (symlinks out of the tree, submodules, a huge blob,
// thousands of files). Also the directory reader the CLI uses on a checkout.
#include "gitsource/snapshot.h"

#include <gtest/gtest.h>

#include <fstream>

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

TEST_F(SnapshotTest, ReadsSchematicFilesDirectlyInSchematicsOnly) {
  ImportOnMain("M 100644 inline schematics/edge.yaml\n" + Data("customization: {}") +
               "M 120000 inline schematics/evil.yaml\n" + Data("/etc/shadow") +
               "M 100644 inline schematics/nested/deep.yaml\n" + Data("nested") +
               "M 100644 inline schematics/notes.txt\n" + Data("not yaml"));
  absl::StatusOr<ProfileSnapshot> snapshot = PollAndRead(FileConfig());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ASSERT_EQ(Paths(*snapshot), (std::vector<std::string>{"clusters/prod.yaml", "reconciler.yaml",
                                                        "schematics/edge.yaml"}));
  EXPECT_EQ(snapshot->files[2].content, "customization: {}");
}

TEST_F(SnapshotTest, SchematicFilesCountAgainstTheSnapshotLimits) {
  ImportOnMain("M 100644 :1 schematics/huge.yaml\nM 100644 inline schematics/a.yaml\n" +
                   Data("customization: {}"),
               "blob\nmark :1\n" + Data(std::string(3 << 20, 'a')));
  GitSourceConfig config = FileConfig();
  config.snapshot_limits.max_file_bytes = 1 << 20;
  absl::StatusOr<ProfileSnapshot> snapshot = PollAndRead(config);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ASSERT_EQ(Paths(*snapshot), (std::vector<std::string>{"clusters/prod.yaml", "reconciler.yaml",
                                                        "schematics/a.yaml",
                                                        "schematics/huge.yaml"}));
  EXPECT_TRUE(snapshot->files[3].oversized);
  EXPECT_TRUE(snapshot->files[3].content.empty());
  config.snapshot_limits.max_files = 3;
  EXPECT_EQ(PollAndRead(config).status().code(), absl::StatusCode::kFailedPrecondition);
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

// The probe: 2,500 entries naming one 1 MiB blob (a few KB as a pack). Every entry
// counts, the shared blob each time; the error carries the total of all 2,500, which only
// sizing every entry from its header before reading any can know (reading them would have
// stopped at the budget, or taken 2.5 GB).
TEST_F(SnapshotTest, OneBlobNamedThousandsOfTimesIsRefusedAtTheByteBudget) {
  std::string lines;
  for (int i = 0; i < 2500; ++i) lines += fmt::format("M 100644 :1 clusters/c{:05}.yaml\n", i);
  ImportOnMain(lines, "blob\nmark :1\n" + Data(std::string(1 << 20, 'a')));
  absl::StatusOr<ProfileSnapshot> snapshot = PollAndRead(FileConfig());
  EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(snapshot.status().message());
  EXPECT_NE(message.find("watched branch snapshot budget of 64 MiB (67108864 bytes)"),
            std::string::npos)
      << message;
  // 2,500 MiB of profiles, plus prod.yaml, reconciler.yaml and the clusters/ tree.
  constexpr std::string_view kCount = "2502 profile files of ";
  const std::size_t at = message.find(kCount);
  ASSERT_NE(at, std::string::npos) << message;
  EXPECT_GT(std::stoull(message.substr(at + kCount.size())), 2500ull << 20) << message;
}

TEST_F(SnapshotTest, TheByteBudgetCountsWhatIsReadNotWhatIsOversized) {
  ImportOnMain("M 100644 :1 clusters/huge.yaml\nM 100644 :2 clusters/big.yaml\n",
               "blob\nmark :1\n" + Data(std::string(3 << 20, 'a')) + "blob\nmark :2\n" +
                   Data(std::string(600 << 10, 'b')));
  GitSourceConfig config = FileConfig();
  config.snapshot_limits.max_total_bytes = 1 << 20;  // huge is oversized, unread, free
  absl::StatusOr<ProfileSnapshot> snapshot = PollAndRead(config);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(snapshot->files.size(), 4u);
  config.snapshot_limits.max_total_bytes = 500 << 10;  // big alone is past it
  config.state_dir = tmp_ / "state-smaller-budget";
  EXPECT_EQ(PollAndRead(config).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(SnapshotTest, PreviewLimitsAreStricterThanTheWatchedBranchs) {
  const SnapshotLimits branch, preview = PreviewSnapshotLimits();
  EXPECT_LT(preview.max_files, branch.max_files);
  EXPECT_LT(preview.max_total_bytes, branch.max_total_bytes);
  EXPECT_LE(preview.max_file_bytes, branch.max_file_bytes);
  EXPECT_EQ(branch.max_files, 5000u);
  EXPECT_EQ(branch.max_total_bytes, std::uint64_t{64} << 20);
  EXPECT_EQ(preview.max_files, 500u);
  EXPECT_EQ(preview.max_total_bytes, std::uint64_t{8} << 20);
}

TEST_F(SnapshotTest, DirectoryReaderMatchesTheCommitReader) {
  CommitDesired({{"schematics/edge.yaml", "customization: {}\n"}}, "Add a schematic");
  absl::StatusOr<ProfileSnapshot> from_git = PollAndRead(FileConfig());
  absl::StatusOr<ProfileSnapshot> from_dir = ReadDirectorySnapshot(upstream_.work());
  ASSERT_TRUE(from_git.ok()) << from_git.status();
  ASSERT_TRUE(from_dir.ok()) << from_dir.status();
  EXPECT_EQ(Paths(*from_git), Paths(*from_dir));
  EXPECT_EQ(Paths(*from_dir).back(), "schematics/edge.yaml");
  for (std::size_t i = 0; i < from_dir->files.size(); ++i) {
    EXPECT_EQ(from_git->files[i].content, from_dir->files[i].content);
  }
}

// A checkout's files are sized (stat) before any is read: 2,500 sparse files of 1 MiB take
// no disk and would take 2.5 GB to read.
TEST(DirectorySnapshotTest, PastTheByteBudgetIsRefusedBeforeReading) {
  TempDir dir;
  std::filesystem::create_directories(dir / "clusters");
  for (int i = 0; i < 2500; ++i) {
    const std::filesystem::path file = dir / fmt::format("clusters/c{:05}.yaml", i);
    std::ofstream(file).put('a');
    std::filesystem::resize_file(file, 1 << 20);
  }
  absl::StatusOr<ProfileSnapshot> snapshot = ReadDirectorySnapshot(dir.path());
  EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(snapshot.status().message().find(
                "2500 profile files of 2621440000 bytes in all: over the watched branch "
                "snapshot budget of 64 MiB (67108864 bytes)"),
            std::string::npos)
      << snapshot.status();
  SnapshotLimits fewer;
  fewer.max_files = 100;
  EXPECT_NE(ReadDirectorySnapshot(dir.path(), fewer)
                .status()
                .message()
                .find("more than 100 profile files"),
            std::string::npos);
}

TEST(DirectorySnapshotTest, SymlinkedClustersDefaultsAndProfilesAreErrorsNamingThePath) {
  TempDir dir;
  std::filesystem::create_symlink("/etc", dir / "clusters");
  absl::StatusOr<ProfileSnapshot> snapshot = ReadDirectorySnapshot(dir.path());
  EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(snapshot.status().message().find((dir / "clusters").string() +
                                             " is a symbolic link (to /etc)"),
            std::string::npos)
      << snapshot.status();

  std::filesystem::remove(dir / "clusters");
  std::filesystem::create_directories(dir / "clusters");
  std::filesystem::create_symlink("/etc/hostname", dir / "clusters/evil.yaml");
  snapshot = ReadDirectorySnapshot(dir.path());
  EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(snapshot.status().message().find("clusters/evil.yaml is a symbolic link"),
            std::string::npos)
      << snapshot.status();

  std::filesystem::remove(dir / "clusters/evil.yaml");
  std::filesystem::create_symlink("/etc", dir / "schematics");
  snapshot = ReadDirectorySnapshot(dir.path());
  EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(snapshot.status().message().find((dir / "schematics").string() +
                                             " is a symbolic link (to /etc)"),
            std::string::npos)
      << snapshot.status();
  std::filesystem::remove(dir / "schematics");
  std::filesystem::create_directories(dir / "schematics");
  std::filesystem::create_symlink("/etc/hostname", dir / "schematics/evil.yaml");
  EXPECT_EQ(ReadDirectorySnapshot(dir.path()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  std::filesystem::remove(dir / "schematics/evil.yaml");

  std::filesystem::create_symlink("/etc/hostname", dir / "reconciler.yaml");
  EXPECT_EQ(ReadDirectorySnapshot(dir.path()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  std::filesystem::remove(dir / "reconciler.yaml");
  EXPECT_TRUE(ReadDirectorySnapshot(dir.path()).ok());
}

}  // namespace
}  // namespace tr::gitsource::testing
