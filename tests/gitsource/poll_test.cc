// Polling and fetching through every transport against real servers on loopback: the
// first poll clones, an idle poll moves no pack, a new commit is fetched incrementally,
// and concurrent polls coalesce.
#include <gtest/gtest.h>

#include <algorithm>
#include <latch>
#include <thread>

#include "gitsource/config.h"
#include "gitsource/git_source.h"
#include "tests/gitsource/fixture.h"
#include "tests/support/servers.h"

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

// Past max_mirror_packs the mirror is compacted at a poll that brings nothing new; a poll that
// brings a commit (someone waits for it) compacts only past twice as many.
TEST_F(PollTest, ManyFetchesAreCompactedIntoOnePack) {
  GitDaemon daemon(served_);
  GitSourceConfig config = Config(daemon.Url("profiles"));
  config.max_mirror_packs = 3;
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  auto packs = [&] {
    int n = 0;
    for (const auto& entry :
         std::filesystem::directory_iterator(config.state_dir / "mirror.git/objects/pack")) {
      n += entry.path().extension() == ".pack" ? 1 : 0;
    }
    return n;
  };
  std::vector<std::string> commits = {desired_tip_};
  int most = 0;
  for (int i = 0; i < 10; ++i) {
    if (i > 0) commits.push_back(CommitDesired({{"clusters/prod.yaml", std::to_string(i)}}, "x"));
    absl::StatusOr<RemoteHead> head = source->Poll();
    ASSERT_TRUE(head.ok()) << head.status();
    ASSERT_TRUE(head->fetched);
    most = std::max(most, packs());
    EXPECT_LE(packs(), 6);
  }
  EXPECT_GT(most, 3) << "a poll that fetched compacted at max_mirror_packs";
  const int before_quiet_poll = packs();
  ASSERT_GT(before_quiet_poll, 3);
  absl::StatusOr<RemoteHead> quiet = source->Poll();
  ASSERT_TRUE(quiet.ok()) << quiet.status();
  EXPECT_FALSE(quiet->fetched);
  EXPECT_EQ(packs(), 1) << "a poll that fetched nothing left " << before_quiet_poll << " packs";
  for (const std::string& commit : commits) {
    absl::StatusOr<ProfileSnapshot> snapshot = source->Snapshot(commit);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  }
  EXPECT_EQ(source->Snapshot(commits.back())->files[0].content, "9");
}

}  // namespace
}  // namespace tr::gitsource::testing
