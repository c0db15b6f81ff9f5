// The source loop in simulated time: polls publish each new commit's profiles once and enqueue
// their clusters, waits are jittered, progress is marked only by a successful poll, and the
// start-up status load retries what time fixes and returns at once what it does not.
#include "reconciler/loop/source_poller.h"

#include <gtest/gtest.h>

#include <deque>

#include "tests/support/simulated_env.h"

namespace tr::reconciler {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr char kProfile[] = R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata: {name: NAME}
spec:
  endpoints: [127.0.0.1]
  credentials: NAME
  talos: {version: 1.12.0, image: factory.talos.dev/metal-installer/abc}
  kubernetes: {version: 1.34.1}
  nodes:
    - {name: cp, address: 127.0.0.1, role: controlplane}
)";

std::string Profile(const std::string& name) {
  std::string text = kProfile;
  for (size_t at; (at = text.find("NAME")) != std::string::npos;) text.replace(at, 4, name);
  return text;
}

// The repository as a script: each Poll returns the next head; Snapshot the files of a commit.
class ScriptedSource final : public gitsource::GitSource {
 public:
  absl::StatusOr<gitsource::RemoteHead> Poll(std::stop_token) override {
    if (env != nullptr) env->Advance(poll_takes);
    if (heads.empty()) return absl::UnavailableError("script ended");
    absl::StatusOr<std::string> next = heads.front();
    heads.pop_front();
    if (!next.ok()) return next.status();
    return gitsource::RemoteHead{*next, false, 0};
  }
  absl::StatusOr<gitsource::ProfileSnapshot> Snapshot(std::string_view commit) override {
    ++snapshots;
    auto found = files.find(std::string(commit));
    if (found == files.end()) return absl::NotFoundError("no such commit");
    return gitsource::ProfileSnapshot{{}, found->second};
  }
  std::deque<absl::StatusOr<std::string>> heads;
  std::map<std::string, std::vector<core::SourceFile>> files;
  int snapshots = 0;
  tr::test_support::SimulatedEnv* env = nullptr;  // moved on by `poll_takes` in each Poll
  std::chrono::milliseconds poll_takes{0};
};

class SourcePollerTest : public ::testing::Test {
 protected:
  SourcePoller MakePoller(SourcePollerOptions options = {10s, 0.1}) {
    return SourcePoller(
        options, {source_, desired_, [this](const std::string& c) { enqueued_.push_back(c); },
                  metrics_, env_, nullptr});
  }
  ScriptedSource source_;
  DesiredState desired_;
  std::vector<std::string> enqueued_;
  Metrics metrics_;
  SourcePollerTest() { env_.uniforms = {0.0, 0.5, 0.999}; }

  tr::test_support::SimulatedEnv env_;
};

TEST_F(SourcePollerTest, PublishesEachNewCommitOnceAndEnqueuesItsClusters) {
  source_.files["c1"] = {{"clusters/a.yaml", Profile("a")}};
  source_.files["c2"] = {{"clusters/a.yaml", Profile("a")},
                         {"clusters/b.yaml", Profile("b")},
                         {"clusters/broken.yaml", "kind: [\n"}};
  source_.heads = {"c1", "c1", "c2"};
  SourcePoller poller = MakePoller();
  ASSERT_TRUE(poller.PollOnce({}).ok());
  ASSERT_NE(desired_.Current(), nullptr);
  EXPECT_EQ(desired_.Current()->commit, "c1");
  EXPECT_TRUE(metrics_.ready);
  EXPECT_EQ(enqueued_, std::vector<std::string>{"a"});
  ASSERT_TRUE(poller.PollOnce({}).ok());  // unchanged: not read again
  EXPECT_EQ(source_.snapshots, 1);
  EXPECT_EQ(enqueued_.size(), 1u);
  ASSERT_TRUE(poller.PollOnce({}).ok());
  EXPECT_EQ(desired_.Current()->commit, "c2");
  EXPECT_EQ(desired_.Current()->profiles.profiles.size(), 2u);
  EXPECT_EQ(desired_.Current()->profiles.invalid.size(), 1u);
  // The invalid profile's cluster is enqueued too, so its Blocked status is written.
  EXPECT_EQ(enqueued_, (std::vector<std::string>{"a", "a", "b", "broken"}));
  EXPECT_EQ(metrics_.git_polls.Value("ok"), 3u);
  EXPECT_EQ(metrics_.git_polls.Value("failed"), 0u);
  EXPECT_EQ(metrics_.git_poll_duration.Count("ok"), 3u);
}

// With --shards, a spec.shard beyond them makes the profile invalid — enqueued, so its status
// says why — rather than a cluster no replica ever holds.
TEST_F(SourcePollerTest, AShardBeyondTheShardCountIsAnInvalidProfileNotADroppedCluster) {
  std::string pinned = Profile("far") + "  shard: 4\n";
  source_.files["c1"] = {{"clusters/near.yaml", Profile("near") + "  shard: 3\n"},
                         {"clusters/far.yaml", pinned}};
  source_.heads = {"c1"};
  SourcePoller poller = MakePoller({10s, 0.1, 4});
  ASSERT_TRUE(poller.PollOnce({}).ok());
  const core::ProfileSet& set = desired_.Current()->profiles;
  ASSERT_EQ(set.profiles.size(), 1u);
  EXPECT_EQ(set.profiles[0].shard, 3);
  ASSERT_EQ(set.invalid.size(), 1u);
  EXPECT_EQ(set.invalid[0].cluster, "far");
  ASSERT_EQ(set.invalid[0].diagnostics.size(), 1u);
  EXPECT_EQ(set.invalid[0].diagnostics[0].ToString(),
            "clusters/far.yaml:11:10: spec.shard: must be below the number of shards, 4 "
            "(--shards)");
  EXPECT_EQ(enqueued_, (std::vector<std::string>{"near", "far"}));
}

TEST_F(SourcePollerTest, AnUnreadableSnapshotIsTriedAgainAtTheNextPoll) {
  source_.heads = {"c1", "c1"};
  SourcePoller poller = MakePoller();
  EXPECT_TRUE(poller.PollOnce({}).ok());
  EXPECT_EQ(desired_.Current(), nullptr);
  source_.files["c1"] = {{"clusters/a.yaml", Profile("a")}};
  EXPECT_TRUE(poller.PollOnce({}).ok());
  ASSERT_NE(desired_.Current(), nullptr);
  EXPECT_EQ(source_.snapshots, 2);
}

TEST_F(SourcePollerTest, OnlyASuccessfulPollIsProgress) {
  const auto started = env_.Now();
  source_.heads = {absl::UnavailableError("down"), absl::UnavailableError("down"), "c1"};
  source_.files["c1"] = {};
  SourcePoller poller = MakePoller();
  EXPECT_EQ(poller.PollOnce({}).code(), absl::StatusCode::kUnavailable);
  env_.Advance(20min);
  EXPECT_EQ(poller.PollOnce({}).code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(metrics_.Live(started, env_.Now(), 15min));
  EXPECT_EQ(metrics_.git_polls.Value("failed"), 2u);
  EXPECT_TRUE(poller.PollOnce({}).ok());
  EXPECT_TRUE(metrics_.Live(started, env_.Now(), 15min));
  EXPECT_FALSE(metrics_.Live(started, env_.Now() + 16min, 15min));
}

// Each poll's duration is measured on the environment's clock and lands in its bucket, by result.
TEST_F(SourcePollerTest, PollDurationsAndFailuresAreObserved) {
  source_.env = &env_;
  source_.poll_takes = 2s;
  source_.heads = {absl::UnavailableError("down"), "c1"};
  source_.files["c1"] = {};
  SourcePoller poller = MakePoller();
  EXPECT_EQ(poller.PollOnce({}).code(), absl::StatusCode::kUnavailable);
  source_.poll_takes = 40ms;
  EXPECT_TRUE(poller.PollOnce({}).ok());
  EXPECT_EQ(metrics_.git_polls.Value("failed"), 1u);
  EXPECT_EQ(metrics_.git_polls.Value("ok"), 1u);
  EXPECT_EQ(metrics_.git_poll_duration.Count("failed"), 1u);
  EXPECT_EQ(metrics_.git_poll_duration.CountAtMost("failed", 1), 0u);
  EXPECT_EQ(metrics_.git_poll_duration.CountAtMost("failed", 2.5), 1u);
  EXPECT_DOUBLE_EQ(metrics_.git_poll_duration.Sum("failed"), 2.0);
  EXPECT_EQ(metrics_.git_poll_duration.CountAtMost("ok", 0.05), 1u);
  EXPECT_DOUBLE_EQ(metrics_.git_poll_duration.Sum("ok"), 0.04);
}

TEST_F(SourcePollerTest, RunWaitsAJitteredIntervalBetweenPolls) {
  source_.files["c1"] = {{"clusters/a.yaml", Profile("a")}};
  source_.heads = {"c1", "c1", "c1"};
  env_.sleep_budget = 3;
  SourcePoller poller = MakePoller({10s, 0.1});
  poller.Run({});
  // 10s * (0.9 + 0.2 * u) for u = 0, 0.5, 0.999: spread, never in lockstep.
  EXPECT_EQ(env_.slept, (std::vector<milliseconds>{9000ms, 10000ms, 10998ms}));
  EXPECT_EQ(metrics_.git_polls.Value("ok"), 3u);
}

// A status store as a script of LoadAll results.
class ScriptedStore final : public StatusStore {
 public:
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(std::stop_token) override {
    ++loads;
    if (results.empty()) return std::map<std::string, core::ClusterStatus>{};
    absl::Status next = results.front();
    results.pop_front();
    if (!next.ok()) return next;
    return std::map<std::string, core::ClusterStatus>{};
  }
  absl::Status Record(const core::ClusterStatus&, std::stop_token) override {
    return absl::OkStatus();
  }
  std::deque<absl::Status> results;
  int loads = 0;
};

TEST_F(SourcePollerTest, StatusLoadRetriesTransientErrorsWithJitteredBackoff) {
  ScriptedStore store;
  store.results = {absl::UnavailableError("connection refused"),
                   absl::DeadlineExceededError("slow"), absl::OkStatus()};
  env_.uniforms = {0.0};
  auto loaded = LoadStatusesAtStart(store, {1s, 30s, 0}, env_, {});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(store.loads, 3);
  EXPECT_EQ(env_.slept, (std::vector<milliseconds>{500ms, 1000ms}));
}

TEST_F(SourcePollerTest, StatusLoadReturnsErrorsOnlyAPersonCanFixAtOnce) {
  for (const absl::Status& permanent :
       {absl::UnauthenticatedError("refusing to send credentials over plain http://"),
        absl::PermissionDeniedError("host key unknown"), absl::InvalidArgumentError("bad url"),
        absl::DataLossError("cannot read back status/a.yaml")}) {
    ScriptedStore store;
    store.results = {permanent};
    auto loaded = LoadStatusesAtStart(store, {1s, 30s, 0}, env_, {});
    EXPECT_EQ(loaded.status().code(), permanent.code());
    EXPECT_EQ(store.loads, 1);
  }
  EXPECT_TRUE(env_.slept.empty());
}

TEST_F(SourcePollerTest, StatusLoadEndsWhenStopped) {
  ScriptedStore store;
  store.results = {absl::UnavailableError("down"), absl::UnavailableError("down")};
  env_.sleep_budget = 1;  // the first backoff is interrupted by the stop
  auto loaded = LoadStatusesAtStart(store, {1s, 30s, 0}, env_, {});
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(store.loads, 1);
}

}  // namespace
}  // namespace tr::reconciler
