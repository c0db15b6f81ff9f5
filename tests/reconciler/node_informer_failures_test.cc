// NodeInformer's failures, with a Kubernetes client that answers as scripted: a list the API
// does not answer is tried again after a backoff; a watch whose version the API no longer has
// (410 Expired, OutOfRange) lists again at once; while it is not listed again Nodes() answers
// nothing rather than what it had.
#include <gtest/gtest.h>

#include <deque>

#include "base/mutex.h"
#include "reconciler/clients/kube/node_informer.h"
#include "tests/support/node_watch_only_kube.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::kube {
namespace {

using namespace std::chrono_literals;

class ScriptedNodesClient final : public test_support::NodeWatchOnlyKube {
 public:
  // Each list takes the next answer; each watch the next, and one without an answer waits
  // for its stop (a live watch with nothing to say).
  std::deque<absl::StatusOr<VersionedNodes>> lists ABSL_GUARDED_BY(mu);
  std::deque<absl::Status> watches ABSL_GUARDED_BY(mu);
  std::vector<std::string> watched_from ABSL_GUARDED_BY(mu);
  Mutex mu;
  std::condition_variable_any watch_started;  // notified with each entry of watched_from

  // Waits until `n` watches have started (the informer counts one just before it starts it).
  bool WaitForWatches(size_t n) {
    MutexLock lock(mu);
    return watch_started.wait_for(lock, std::chrono::seconds(20),
                                  [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                    return watched_from.size() >= n;
                                  });
  }

  absl::StatusOr<VersionedNodes> ListNodesVersioned() override {
    MutexLock lock(mu);
    if (lists.empty()) return absl::UnavailableError("no more lists scripted");
    auto next = lists.front();
    lists.pop_front();
    return next;
  }
  absl::Status WatchNodes(const std::string& resource_version, std::chrono::seconds,
                          std::stop_token stop,
                          const std::function<bool(const NodeWatchEvent&)>&) override {
    std::optional<absl::Status> next;
    {
      MutexLock lock(mu);
      watched_from.push_back(resource_version);
      watch_started.notify_all();
      if (!watches.empty()) {
        next = watches.front();
        watches.pop_front();
      }
    }
    if (next) return *next;
    std::condition_variable_any cv;
    std::mutex m;
    std::unique_lock lock(m);
    cv.wait(lock, stop, [] { return false; });
    return absl::CancelledError("stopped");
  }
};

VersionedNodes NodesAt(const std::string& version, const std::string& node) {
  KubeNode n;
  n.name = node;
  return {{n}, version};
}

TEST(NodeInformerFailuresTest, AnUnansweredListBacksOffAndAnExpiredWatchListsAgainAtOnce) {
  auto kube = std::make_shared<ScriptedNodesClient>();
  {
    MutexLock lock(kube->mu);
    kube->lists = {absl::UnavailableError("kubernetes list nodes: connection refused"),
                   NodesAt("10", "old"), NodesAt("20", "new")};
    kube->watches = {absl::OutOfRangeError("too old resource version: 10 (15)")};
  }
  test_support::SimulatedEnv env;
  NodeInformer informer(kube, env);
  ASSERT_TRUE(informer.WaitUntil(
      [](const NodeInformer::Counts& c, const std::optional<std::vector<KubeNode>>& nodes) {
        return c.watches == 2 && nodes.has_value();
      },
      20s));
  const auto nodes = informer.Nodes();
  ASSERT_TRUE(nodes.has_value());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ(nodes->front().name, "new") << "the list after the 410 replaces the cache";
  const NodeInformer::Counts counts = informer.counts();
  EXPECT_EQ(counts.lists, 3);
  EXPECT_EQ(counts.failures, 2);
  ASSERT_TRUE(kube->WaitForWatches(2));
  MutexLock lock(kube->mu);
  EXPECT_EQ(kube->watched_from, (std::vector<std::string>{"10", "20"}));
  // One backoff, after the unanswered list; none after the 410.
  EXPECT_EQ(env.slept.size(), 1u);
  EXPECT_GT(env.slept.front(), 0ms);
}

TEST(NodeInformerFailuresTest, ABrokenWatchAnswersNothingUntilListedAgain) {
  auto kube = std::make_shared<ScriptedNodesClient>();
  {
    MutexLock lock(kube->mu);
    kube->lists = {NodesAt("10", "a")};  // the next list is not answered
    kube->watches = {absl::UnavailableError("kubernetes watch nodes: connection reset")};
  }
  test_support::SimulatedEnv env;
  env.sleep_budget = 2;  // the informer's retry loop stops at its second backoff
  NodeInformer informer(kube, env);
  ASSERT_TRUE(informer.WaitUntil(
      [](const NodeInformer::Counts& c, const std::optional<std::vector<KubeNode>>&) {
        return c.lists == 2 && c.failures == 2;
      },
      20s));
  EXPECT_FALSE(informer.Nodes().has_value()) << "a cache no watch keeps current was answered";
}

}  // namespace
}  // namespace tr::reconciler::kube
