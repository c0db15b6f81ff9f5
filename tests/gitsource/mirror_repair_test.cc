// The mirror after a kill: what a dead process of ours leaves in it (stale lock files, a
// half-written pack, a torn ref) is repaired when the next process opens it, a mirror beyond
// repair is cloned afresh, and two live processes never share one. Real libgit2 repositories
// served by a real git daemon.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fmt/format.h"
#include "gitsource/mirror.h"
#include "gitsource/status_writer.h"
#include "tests/gitsource/fixture.h"
#include "tests/support/servers.h"

namespace tr::gitsource::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;

constexpr char kStatusLock[] = "refs/remotes/origin/talos-reconciler/status.lock";

class MirrorRepairTest : public UpstreamTest {
 protected:
  fs::path MirrorPath() const { return tmp_ / "state" / "mirror.git"; }

  std::unique_ptr<GitStatusWriter> Writer(const LibGitSource& source) {
    auto writer = GitStatusWriter::Create(source, {}, Env::Default());
    EXPECT_TRUE(writer.ok()) << writer.status();
    return writer.ok() ? *std::move(writer) : nullptr;
  }

  // A first life: polls and records one status, so the mirror has both tracking refs.
  void FirstLife() {
    auto source = OpenSource(Config(daemon_.Url("profiles")));
    ASSERT_NE(source, nullptr);
    ASSERT_TRUE(source->Poll().ok());
    auto writer = Writer(*source);
    ASSERT_NE(writer, nullptr);
    ASSERT_TRUE(writer->Write({{{"status/prod.yaml", "1\n"}}, "prod"}).ok());
  }

  GitDaemon daemon_{served_};
};

TEST_F(MirrorRepairTest, StaleRefLocksOfAKilledProcessAreRemoved) {
  ASSERT_NO_FATAL_FAILURE(FirstLife());
  // What a kill during a ref update leaves behind.
  WriteFile(MirrorPath() / kStatusLock, std::string(40, 'a') + "\n");
  WriteFile(MirrorPath() / "packed-refs.lock", "");
  WriteFile(MirrorPath() / "refs/remotes/origin/main.lock", "");

  auto source = OpenSource(Config(daemon_.Url("profiles")));
  ASSERT_NE(source, nullptr);
  EXPECT_THAT(source->mirror()->repaired(), Contains(kStatusLock));
  EXPECT_FALSE(fs::exists(MirrorPath() / kStatusLock));
  auto writer = Writer(*source);
  ASSERT_NE(writer, nullptr);
  absl::StatusOr<StatusCommit> written = writer->Write({{{"status/prod.yaml", "2\n"}}, "prod"});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(upstream_.GitBare({"show", written->commit + ":status/prod.yaml"}), "2");
  absl::StatusOr<StatusFiles> read = writer->ReadLatest();
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->files.at("status/prod.yaml"), "2\n");
  absl::StatusOr<RemoteHead> head = source->Poll();
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->commit, desired_tip_);
}

TEST_F(MirrorRepairTest, HalfWrittenPackAndTornRefAreRemovedAndRefetched) {
  ASSERT_NO_FATAL_FAILURE(FirstLife());
  const std::string torn_pack = fmt::format("objects/pack/pack-{}.pack", std::string(40, 'b'));
  WriteFile(MirrorPath() / torn_pack, "PACK\0\0\0\2 cut short");
  WriteFile(MirrorPath() / "objects/pack/pack_git2_0123456789", "temporary");
  WriteFile(MirrorPath() / "refs/remotes/origin/main", "5f3e9a\n");  // torn write
  WriteFile(MirrorPath() / "refs/remotes/origin/gone",
            std::string(40, 'c') + "\n");  // names an object the mirror does not have

  auto source = OpenSource(Config(daemon_.Url("profiles")));
  ASSERT_NE(source, nullptr);
  const std::vector<std::string>& repaired = source->mirror()->repaired();
  EXPECT_THAT(repaired, Contains(torn_pack));
  EXPECT_THAT(repaired, Contains("refs/remotes/origin/main"));
  EXPECT_THAT(repaired, Contains("refs/remotes/origin/gone"));
  absl::StatusOr<RemoteHead> head = source->Poll();
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->commit, desired_tip_);
  absl::StatusOr<ProfileSnapshot> snapshot = source->Snapshot(head->commit);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(snapshot->files.size(), 2u);
}

TEST_F(MirrorRepairTest, AMirrorBeyondRepairIsClonedAfresh) {
  ASSERT_NO_FATAL_FAILURE(FirstLife());
  WriteFile(MirrorPath() / "packed-refs", "this is not a packed-refs file\n\x01\x02\n");

  auto source = OpenSource(Config(daemon_.Url("profiles")));
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->mirror()->repaired(), std::vector<std::string>{"mirror.git"});
  absl::StatusOr<RemoteHead> head = source->Poll();
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_TRUE(head->fetched);
  EXPECT_EQ(head->commit, desired_tip_);
  auto writer = Writer(*source);
  ASSERT_NE(writer, nullptr);
  absl::StatusOr<StatusFiles> read = writer->ReadLatest();
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->files.at("status/prod.yaml"), "1\n");
}

TEST_F(MirrorRepairTest, ALiveOwnerKeepsOthersOut) {
  auto first = OpenSource(Config(daemon_.Url("profiles")));
  ASSERT_NE(first, nullptr);
  WriteFile(MirrorPath() / "packed-refs.lock", "");  // a lock a live process may hold
  absl::StatusOr<std::unique_ptr<LibGitSource>> second =
      LibGitSource::Open(Config(daemon_.Url("profiles")), Env::Default());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
  EXPECT_TRUE(fs::exists(MirrorPath() / "packed-refs.lock"));  // not touched
  first.reset();
  fs::remove(MirrorPath() / "packed-refs.lock");
  EXPECT_NE(OpenSource(Config(daemon_.Url("profiles"))), nullptr);
}

TEST_F(MirrorRepairTest, AFreshMirrorReportsNoRepair) {
  auto source = OpenSource(Config(daemon_.Url("profiles")));
  ASSERT_NE(source, nullptr);
  EXPECT_TRUE(source->mirror()->repaired().empty());
}

}  // namespace
}  // namespace tr::gitsource::testing
