#include "reconciler/loop/controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <functional>
#include <thread>
#include <utility>

#include "tests/support/simulated_env.h"

namespace tr::reconciler {
namespace {

using namespace std::chrono_literals;

using tr::test_support::SimulatedEnv;

// Simulated time with the jitter at its middle: resyncs exactly on the interval, backoffs three
// quarters of their exponential step.
SimulatedEnv MiddleEnv() {
  SimulatedEnv env;
  env.uniforms = {0.5};
  return env;
}

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

// Looks at its cluster a millisecond into each reconcile, and says when; `before_look` and
// `after_look` run once, around the look.
class LookingReconciler final : public ClusterReconciler {
 public:
  explicit LookingReconciler(SimulatedEnv& env) : env_(env) {}
  ReconcileOutcome Reconcile(const std::string&, std::stop_token) override {
    ++reconciles;
    if (before_look) std::exchange(before_look, nullptr)();
    env_.Advance(1ms);
    ReconcileOutcome outcome = ReconcileOutcome::Done();
    outcome.looked_at = env_.Monotonic();
    env_.Advance(1ms);
    if (after_look) std::exchange(after_look, nullptr)();
    return outcome;
  }
  std::function<void()> before_look;
  std::function<void()> after_look;
  int reconciles = 0;

 private:
  SimulatedEnv& env_;
};

// A change enqueued during a reconcile runs the cluster again only when it came after the
// reconcile's look began; any other trigger always does.
TEST(ControllerTest, AChangeTheReconcilesLookSawDoesNotRunItAgain) {
  SimulatedEnv clock = MiddleEnv();
  LookingReconciler r(clock);
  Controller c(Options(), r, clock);
  r.before_look = [&] { c.EnqueueChange("a"); };
  c.Enqueue("a");
  EXPECT_EQ(c.RunDue(), 1);
  EXPECT_EQ(c.NextDue(), clock.Now() + 5min);

  r.after_look = [&] { c.EnqueueChange("a"); };
  c.Enqueue("a");
  EXPECT_EQ(c.RunDue(), 2);

  r.before_look = [&] { c.Enqueue("a"); };  // a webhook: not a change a look reads
  c.Enqueue("a");
  EXPECT_EQ(c.RunDue(), 2);
  EXPECT_EQ(r.reconciles, 5);
}

TEST(ControllerTest, DoneRequeuesAtTheResyncInterval) {
  SimulatedEnv clock = MiddleEnv();
  ScriptedReconciler r;
  Controller c(Options(), r, clock);
  c.Enqueue("a");
  c.Enqueue("a");
  EXPECT_EQ(c.RunDue(), 1);
  EXPECT_EQ(c.NextDue(), clock.Now() + 5min);
  clock.Advance(4min);
  EXPECT_EQ(c.RunDue(), 0);
  clock.Advance(1min);
  EXPECT_EQ(c.RunDue(), 1);
}

TEST(ControllerTest, RequeueAfterAndCappedBackoff) {
  SimulatedEnv clock = MiddleEnv();
  ScriptedReconciler r;
  for (int i = 0; i < 6; ++i) r.scripts["a"].push_back(ReconcileOutcome::TransientError("down"));
  r.scripts["a"].push_back(ReconcileOutcome::RequeueAfter(30s));
  Controller c(Options(), r, clock);
  c.Enqueue("a");
  std::vector<std::chrono::milliseconds> delays;
  for (int i = 0; i < 7; ++i) {
    const auto before = clock.Now();
    ASSERT_EQ(c.RunDue(), 1);
    delays.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(*c.NextDue() - before));
    clock.Set(*c.NextDue());
  }
  EXPECT_EQ(delays, (std::vector<std::chrono::milliseconds>{750ms, 1500ms, 3s, 6s, 6s, 6s, 30s}));
  // A success resets the backoff.
  r.scripts["a"].push_back(ReconcileOutcome::Done());
  r.scripts["a"].push_back(ReconcileOutcome::TransientError("again"));
  ASSERT_EQ(c.RunDue(), 1);
  EXPECT_EQ(*c.NextDue() - clock.Now(), 5min);
  clock.Set(*c.NextDue());
  const auto before = clock.Now();
  ASSERT_EQ(c.RunDue(), 1);
  EXPECT_EQ(*c.NextDue() - before, 750ms);
}

// A fleet reconciled at one moment (every cluster at start-up) resyncs spread over
// resync * (1 ± 0.1), not in lockstep: none before 4.5 min, all by 5.5 min, and no second of the
// window holds more than a few.
TEST(ControllerTest, ResyncsOfAFleetAreSpread) {
  SimulatedEnv clock;  // seeded randomness
  ScriptedReconciler r;
  Controller c(Options(), r, clock);
  constexpr int kClusters = 200;
  for (int i = 0; i < kClusters; ++i) c.Enqueue("c" + std::to_string(i));
  ASSERT_EQ(c.RunDue(), kClusters);
  clock.Advance(4min + 30s - 1ms);
  EXPECT_EQ(c.RunDue(), 0);
  std::map<int, int> per_second;
  int ran = 0;
  for (int second = 0; second <= 60; ++second) {
    clock.Advance(1s);
    const int now_ran = c.RunDue();
    if (now_ran > 0) per_second[second] = now_ran;
    ran += now_ran;
  }
  EXPECT_EQ(ran, kClusters);
  EXPECT_GT(per_second.size(), 40u);  // about 60 seconds hold some of the 200
  for (const auto& [second, count] : per_second) EXPECT_LE(count, 15) << "second " << second;
}

TEST(ControllerTest, ForgetDropsTheCluster) {
  SimulatedEnv clock = MiddleEnv();
  ScriptedReconciler r;
  r.scripts["gone"].push_back(ReconcileOutcome::Forget());
  Controller c(Options(), r, clock);
  c.Enqueue("gone");
  EXPECT_EQ(c.RunDue(), 1);
  EXPECT_EQ(c.NextDue(), std::nullopt);
}

// Real threads in simulated time: many clusters in parallel, never two reconciles of one
// cluster at once.
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
  ConcurrencyProbe probe;
  ControllerOptions options = Options();
  options.workers = 4;
  SimulatedEnv clock;
  Controller c(options, probe, clock);
  std::stop_source stop;
  std::jthread runner([&] { c.Run(stop.get_token()); });
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 10; ++i) c.Enqueue("c" + std::to_string(i));
  }
  // Every worker waits again: the queue has drained (every trigger coalesced into some
  // reconcile).
  ASSERT_TRUE(clock.Settle(options.workers));
  EXPECT_EQ(c.NextDue(), std::nullopt);
  EXPECT_EQ(probe.running, 0);
  stop.request_stop();
  runner.join();
  EXPECT_FALSE(probe.overlap);
  EXPECT_LE(probe.peak.load(), 4);
  EXPECT_EQ(probe.done.size(), 10u);
}

}  // namespace
}  // namespace tr::reconciler
