// Polling and fetching through every transport against real servers on loopback: the
// first poll clones, an idle poll moves no pack, a new commit is fetched incrementally,
// and concurrent polls coalesce.
#include <gtest/gtest.h>

#include <algorithm>
#include <latch>
#include <thread>

#include "gitsource/config.h"
#include "gitsource/git_source.h"
#include "gitsource/mirror.h"
#include "gitsource/pack_rollup.h"
#include "tests/gitsource/fixture.h"
#include "tests/support/process.h"
#include "tests/support/servers.h"
#include "tests/support/wait.h"

namespace tr::gitsource::testing {
namespace {

// Clone, no-op and incremental fetch, the same for every transport.
void ExpectCloneNoopIncremental(UpstreamTest& test, LibGitSource& source,
                                const std::function<std::string()>& commit_desired,
                                const std::string& first_tip) {
  absl::StatusOr<RemoteHead> first = source.Poll();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->commit, first_tip);
  EXPECT_TRUE(first->fetched);

  absl::StatusOr<RemoteHead> idle = source.Poll();
  ASSERT_TRUE(idle.ok()) << idle.status();
  EXPECT_EQ(idle->commit, first_tip);
  EXPECT_FALSE(idle->fetched);
  EXPECT_EQ(idle->received_bytes, 0u);

  const std::string second_tip = commit_desired();
  absl::StatusOr<RemoteHead> next = source.Poll();
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->commit, second_tip);
  EXPECT_TRUE(next->fetched);
  EXPECT_GT(next->received_bytes, 0u);
  // Incremental: the second pack is smaller than the first full one would be.
  absl::StatusOr<ProfileSnapshot> snapshot = source.Snapshot(second_tip);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ASSERT_EQ(snapshot->files.size(), 3u);
  EXPECT_EQ(snapshot->files[1].path, "clusters/staging.yaml");
  (void)test;
}

class PollTest : public UpstreamTest {
 protected:
  std::function<std::string()> AddStaging() {
    return [this] { return CommitDesired({{"clusters/staging.yaml", "kind: x\n"}}, "staging"); };
  }
};

TEST_F(PollTest, FileUrl) {
  auto source = OpenSource(Config("file://" + upstream_.bare().string()));
  ASSERT_NE(source, nullptr);
  ExpectCloneNoopIncremental(*this, *source, AddStaging(), desired_tip_);
}

TEST_F(PollTest, GitDaemon) {
  GitDaemon daemon(served_);
  auto source = OpenSource(Config(daemon.Url("profiles")));
  ASSERT_NE(source, nullptr);
  ExpectCloneNoopIncremental(*this, *source, AddStaging(), desired_tip_);
}

TEST_F(PollTest, SmartHttpNoopPollSendsNoPackRequest) {
  SmartHttpServer http(served_, tmp_ / "http");
  auto source = OpenSource(Config(http.Url("profiles")));
  ASSERT_NE(source, nullptr);
  ASSERT_TRUE(source->Poll().ok());
  const int packs_after_clone = http.CountRequests("POST /profiles.git/git-upload-pack");
  EXPECT_EQ(packs_after_clone, 1);
  absl::StatusOr<RemoteHead> idle = source->Poll();
  ASSERT_TRUE(idle.ok()) << idle.status();
  EXPECT_FALSE(idle->fetched);
  EXPECT_EQ(http.CountRequests("POST /profiles.git/git-upload-pack"), packs_after_clone);
  EXPECT_EQ(http.CountRequests("GET /profiles.git/info/refs?service=git-upload-pack"), 2);
  const std::string next_tip = AddStaging()();
  absl::StatusOr<RemoteHead> next = source->Poll();
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->commit, next_tip);
  EXPECT_EQ(http.CountRequests("POST /profiles.git/git-upload-pack"), packs_after_clone + 1);
}

TEST_F(PollTest, HttpsWithTokenThroughTheDeadlineSocket) {
  SmartHttpServer https(served_, tmp_ / "https", {true, "git", "s3cret-token"});
  Libgit2Settings settings;
  settings.https_ca_file = https.certificate();
  ASSERT_TRUE(ConfigureLibgit2(settings).ok());
  GitSourceConfig config = Config(https.Url("profiles"));
  WriteFile(tmp_ / "token", "s3cret-token\n");
  config.remote.auth.token_file = tmp_ / "token";
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  ExpectCloneNoopIncremental(*this, *source, AddStaging(), desired_tip_);
  ASSERT_TRUE(ConfigureLibgit2({}).ok());
}

TEST_F(PollTest, SshWithKeyAndKnownHost) {
  SshServer sshd(tmp_ / "sshd");
  GitSourceConfig config = Config(sshd.Url(upstream_.bare()));
  WriteFile(tmp_ / "known_hosts", sshd.KnownHostsLine());
  config.remote.auth.known_hosts_file = tmp_ / "known_hosts";
  config.remote.auth.ssh_key_file = sshd.client_key();
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  ExpectCloneNoopIncremental(*this, *source, AddStaging(), desired_tip_);
}

TEST_F(PollTest, MissingBranchIsNotFound) {
  GitSourceConfig config = Config("file://" + upstream_.bare().string());
  config.branch = "does-not-exist";
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->Poll().status().code(), absl::StatusCode::kNotFound);
}

TEST_F(PollTest, ConcurrentPollsCoalesceIntoOneFetch) {
  SmartHttpServer http(served_, tmp_ / "http");
  auto source = OpenSource(Config(http.Url("profiles")));
  ASSERT_NE(source, nullptr);
  constexpr int kThreads = 8;
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  std::vector<absl::StatusOr<RemoteHead>> results(kThreads, absl::UnknownError("not run"));
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = source->Poll();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->commit, desired_tip_);
  }
  // However the threads interleave, exactly one round fetched (the later rounds found the
  // branch where the first left it), and the polls shared rounds: typically two in all.
  EXPECT_EQ(http.CountRequests("POST /profiles.git/git-upload-pack"), 1);
  EXPECT_LT(http.CountRequests("GET /profiles.git/info/refs"), kThreads);
}

TEST_F(PollTest, MirrorPersistsAcrossRestarts) {
  GitDaemon daemon(served_);
  {
    auto source = OpenSource(Config(daemon.Url("profiles")));
    ASSERT_NE(source, nullptr);
    ASSERT_TRUE(source->Poll().ok());
  }
  auto restarted = OpenSource(Config(daemon.Url("profiles")));
  ASSERT_NE(restarted, nullptr);
  absl::StatusOr<RemoteHead> head = restarted->Poll();
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_FALSE(head->fetched);
  EXPECT_TRUE(restarted->Snapshot(head->commit).ok());
}

// Whether `counts` (objects per pack) form the progression the mirror's compaction keeps:
// sorted by size, each pack at least twice as large as all smaller ones together.
bool Geometric(std::vector<std::uint32_t> counts) {
  std::sort(counts.begin(), counts.end());
  std::uint64_t smaller = 0;
  for (std::uint32_t count : counts) {
    if (count < 2 * smaller) return false;
    smaller += count;
  }
  return true;
}

// Past max_mirror_packs the mirror is compacted, on its own thread, after a poll that brings
// nothing new; a poll that brings a commit asks for it only past twice as many packs. The
// compaction rolls the packs outside the geometric progression up (after the quiet poll, all
// but the largest), and loses no object: every commit still reads, and git's own fsck finds
// the mirror whole.
TEST_F(PollTest, ManyFetchesAreRolledUpIntoAGeometricProgressionOfPacks) {
  GitDaemon daemon(served_);
  GitSourceConfig config = Config(daemon.Url("profiles"));
  config.max_mirror_packs = 3;
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  const std::filesystem::path mirror = config.state_dir / "mirror.git";
  auto pack_sizes = [&] {
    std::vector<std::uint32_t> counts;
    for (const PackFile& pack : ListPacks(mirror)) counts.push_back(pack.objects);
    return counts;
  };
  // Polls, then waits for the compaction it asked for to have run.
  auto poll = [&]() -> absl::StatusOr<RemoteHead> {
    const std::uint64_t done = source->mirror()->CompactionsDone();
    absl::StatusOr<RemoteHead> head = source->Poll();
    EXPECT_TRUE(tr::test_support::WaitUntil(
        [&] { return source->mirror()->CompactionsDone() > done; }));
    return head;
  };
  std::vector<std::string> commits = {desired_tip_};
  std::size_t most = 0;
  // Fetches, at least ten, until the packs are more than three and out of the progression
  // (two small fetches in a row are).
  for (int i = 0; i < 30 && (i < 10 || pack_sizes().size() <= 3 || Geometric(pack_sizes()));
       ++i) {
    if (i > 0) commits.push_back(CommitDesired({{"clusters/prod.yaml", std::to_string(i)}}, "x"));
    absl::StatusOr<RemoteHead> head = poll();
    ASSERT_TRUE(head.ok()) << head.status();
    ASSERT_TRUE(head->fetched);
    const std::vector<std::uint32_t> sizes = pack_sizes();
    most = std::max(most, sizes.size());
    EXPECT_TRUE(sizes.size() <= 6 || Geometric(sizes)) << sizes.size() << " packs";
  }
  EXPECT_GT(most, 3u) << "a poll that fetched compacted at max_mirror_packs";
  const std::size_t before_quiet_poll = pack_sizes().size();
  ASSERT_GT(before_quiet_poll, 3u);
  ASSERT_FALSE(Geometric(pack_sizes()));
  absl::StatusOr<RemoteHead> quiet = poll();
  ASSERT_TRUE(quiet.ok()) << quiet.status();
  EXPECT_FALSE(quiet->fetched);
  // Right after commits were fetched the mirror counts as busy: the largest pack stays, the
  // rest are rolled into one (Mirror::WholeRewritePace).
  EXPECT_LE(pack_sizes().size(), 2u)
      << "a poll that fetched nothing left " << pack_sizes().size() << " packs";
  EXPECT_LT(pack_sizes().size(), before_quiet_poll);
  EXPECT_TRUE(ListLooseObjects(mirror).empty());
  for (const std::string& commit : commits) {
    absl::StatusOr<ProfileSnapshot> snapshot = source->Snapshot(commit);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  }
  EXPECT_EQ(source->Snapshot(commits.back())->files[0].content,
            std::to_string(commits.size() - 1));
  MustRun({"git", "-C", mirror.string(), "fsck", "--strict", "--no-dangling"});
}

}  // namespace
}  // namespace tr::gitsource::testing
