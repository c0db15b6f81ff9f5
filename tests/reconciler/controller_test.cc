#include "reconciler/controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <thread>

namespace tr::reconciler {
namespace {

using namespace std::chrono_literals;

class ManualClock final : public gitsource::WallClock {
 public:
  std::chrono::system_clock::time_point Now() override { return now; }
  std::chrono::system_clock::time_point now = std::chrono::system_clock::time_point{} + 1000h;
};

// Returns scripted outcomes per cluster and records every call.
class ScriptedReconciler final : public ClusterReconciler {
 public:
  ReconcileOutcome Reconcile(const std::string& cluster, std::stop_token) override {
    calls.push_back(cluster);
    auto& script = scripts[cluster];
    if (script.empty()) return ReconcileOutcome::Done();
    ReconcileOutcome next = script.front();
    script.pop_front();
    return next;
  }
  std::map<std::string, std::deque<ReconcileOutcome>> scripts;
  std::vector<std::string> calls;
};

ControllerOptions Options() {
  ControllerOptions o;
  o.resync = 5min;
  o.backoff_initial = 1s;
  o.backoff_max = 8s;
  return o;
}

TEST(ControllerTest, DoneRequeuesAtTheResyncInterval) {
  ManualClock clock;
  ScriptedReconciler r;
  Controller c(Options(), r, clock);
  c.Enqueue("a");
  c.Enqueue("a");
  EXPECT_EQ(c.RunDue(), 1);
  EXPECT_EQ(c.NextDue(), clock.now + 5min);
  clock.now += 4min;
  EXPECT_EQ(c.RunDue(), 0);
  clock.now += 1min;
  EXPECT_EQ(c.RunDue(), 1);
}

TEST(ControllerTest, RequeueAfterAndCappedBackoff) {
  ManualClock clock;
  ScriptedReconciler r;
  for (int i = 0; i < 6; ++i) r.scripts["a"].push_back(ReconcileOutcome::TransientError("down"));
  r.scripts["a"].push_back(ReconcileOutcome::RequeueAfter(30s));
  Controller c(Options(), r, clock);
  c.Enqueue("a");
  std::vector<std::chrono::milliseconds> delays;
  for (int i = 0; i < 7; ++i) {
    const auto before = clock.now;
    ASSERT_EQ(c.RunDue(), 1);
    delays.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(*c.NextDue() - before));
    clock.now = *c.NextDue();
  }
  EXPECT_EQ(delays, (std::vector<std::chrono::milliseconds>{1s, 2s, 4s, 8s, 8s, 8s, 30s}));
  // A success resets the backoff.
  r.scripts["a"].push_back(ReconcileOutcome::Done());
  r.scripts["a"].push_back(ReconcileOutcome::TransientError("again"));
  ASSERT_EQ(c.RunDue(), 1);
  EXPECT_EQ(*c.NextDue() - clock.now, 5min);
  clock.now = *c.NextDue();
  const auto before = clock.now;
  ASSERT_EQ(c.RunDue(), 1);
  EXPECT_EQ(*c.NextDue() - before, 1s);
}

TEST(ControllerTest, ForgetDropsTheCluster) {
  ManualClock clock;
  ScriptedReconciler r;
  r.scripts["gone"].push_back(ReconcileOutcome::Forget());
  Controller c(Options(), r, clock);
  c.Enqueue("gone");
  EXPECT_EQ(c.RunDue(), 1);
  EXPECT_EQ(c.NextDue(), std::nullopt);
}

// Real threads: many clusters in parallel, never two reconciles of one cluster at once.
class ConcurrencyProbe final : public ClusterReconciler {
 public:
  ReconcileOutcome Reconcile(const std::string& cluster, std::stop_token) override {
    const int now_running = ++running;
    int seen = peak.load();
    while (now_running > seen && !peak.compare_exchange_weak(seen, now_running)) {
    }
    {
      std::lock_guard lock(mu);
      if (!active.insert(cluster).second) overlap = true;
    }
    std::this_thread::yield();
    {
      std::lock_guard lock(mu);
      active.erase(cluster);
      ++done[cluster];
    }
    --running;
    ++total;
    return ReconcileOutcome::Forget();
  }
  std::mutex mu;
  std::set<std::string> active;
  std::map<std::string, int> done;
  std::atomic<int> running{0}, peak{0}, total{0};
  bool overlap = false;
};

TEST(ControllerTest, WorkersNeverOverlapOneCluster) {
  gitsource::SystemWallClock clock;
  ConcurrencyProbe probe;
  ControllerOptions options = Options();
  options.workers = 4;
  Controller c(options, probe, clock);
  std::stop_source stop;
  std::jthread runner([&] { c.Run(stop.get_token()); });
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 10; ++i) c.Enqueue("c" + std::to_string(i));
  }
  // Wait until the queue has drained (every trigger coalesced into some reconcile).
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while ((c.NextDue() || probe.running > 0) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  stop.request_stop();
  runner.join();
  EXPECT_FALSE(probe.overlap);
  EXPECT_LE(probe.peak.load(), 4);
  EXPECT_EQ(probe.done.size(), 10u);
}

}  // namespace
}  // namespace tr::reconciler
