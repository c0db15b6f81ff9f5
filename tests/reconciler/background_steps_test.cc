#include "reconciler/operations/background_steps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/fleet_fixtures.h"
#include "tests/support/wait.h"

namespace tr::reconciler {
namespace {

using namespace std::chrono_literals;

// An executor whose long steps block until released (or stopped); it counts what it ran.
class GatedExecutor final : public RolloutExecutor {
 public:
  absl::StatusOr<ActionResult> Execute(const core::ClusterProfile&,
                                       const core::RolloutDecision& d,
                                       std::stop_token stop) override {
    started.Change([](int& n) { ++n; });
    if (d.kind == core::ActionKind::kCompleteNode) return ActionResult{"", "inline", false};
    std::unique_lock lock(mu);
    // Waits with a deadline so a broken test fails rather than hangs.
    const bool released = cv.wait_for(lock, stop, 30s, [&] { return open; });
    if (stop.stop_requested()) {
      ++stopped;
      return absl::CancelledError("stopped");
    }
    if (!released) return absl::DeadlineExceededError("never released");
    return ActionResult{"", "drained " + d.node, false};
  }
  void Release() {
    std::lock_guard lock(mu);
    open = true;
    cv.notify_all();
  }
  // True once exactly `n` steps have started (30 s at most).
  bool WaitStarted(int n) const {
    return started.WaitFor([n](int s) { return s == n; });
  }
  std::string Progress(const std::string& cluster) override { return "held in " + cluster; }
  test_support::Watched<int> started;
  std::atomic<int> stopped{0};

 private:
  std::mutex mu;
  std::condition_variable_any cv;
  bool open = false;
};

core::RolloutDecision Step(core::ActionKind kind, std::string node) {
  core::RolloutDecision d;
  d.kind = kind;
  d.node = std::move(node);
  d.image = "factory.talos.dev/metal-installer/abc:v1.14.2";
  return d;
}

// The clusters woken by finished steps, in order: BackgroundSteps' `on_done`.
class Woken {
 public:
  BackgroundSteps::OnDone Callback() {
    return [this](const std::string& cluster) {
      clusters_.Change([&](std::vector<std::string>& c) { c.push_back(cluster); });
    };
  }
  std::vector<std::string> clusters() const { return clusters_.Get(); }
  // True once `cluster` was woken (30 s at most).
  bool WaitFor(const std::string& cluster) const {
    return clusters_.WaitFor([&](const std::vector<std::string>& c) {
      return std::find(c.begin(), c.end(), cluster) != c.end();
    });
  }

 private:
  test_support::Watched<std::vector<std::string>> clusters_;
};

core::ClusterProfile Profile() {
  using namespace core::testing_fixtures;
  return MakeProfile(FiveNodes("1.13.9", "1.34.1"), "1.14.2", "1.34.1");
}

TEST(BackgroundStepsTest, ALongStepRunsOffTheCallerAndIsCollectedWhenDone) {
  GatedExecutor inner;
  Woken woken;
  BackgroundSteps steps(inner, woken.Callback());
  const core::ClusterProfile profile = Profile();
  const auto drain = Step(core::ActionKind::kDrainNode, "w-0");
  // The caller gets its thread back at once, while the drain is still blocked.
  auto first = steps.Execute(profile, drain, {});
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->in_progress);
  auto again = steps.Execute(profile, drain, {});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->in_progress);
  // What holds the running step, as its executor tells it (a drain: the pod and budget).
  EXPECT_EQ(again->detail, "held in " + profile.name);
  inner.Release();
  ASSERT_TRUE(woken.WaitFor(profile.name)) << "the drain never finished";
  absl::StatusOr<ActionResult> done = steps.Execute(profile, drain, {});
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(done->in_progress);
  EXPECT_EQ(done->detail, "drained w-0");
  EXPECT_EQ(inner.started.Get(), 1) << "the step ran more than once";
}

// A step the rollout moved past is taken once it is done, and then no longer outstanding: the
// same step asked again starts afresh rather than answering the old result.
TEST(BackgroundStepsTest, AFinishedStepIsTakenOnceAndNotAnsweredAgain) {
  GatedExecutor inner;
  Woken woken;
  BackgroundSteps steps(inner, woken.Callback());
  const core::ClusterProfile profile = Profile();
  const auto drain = Step(core::ActionKind::kDrainNode, "w-0");
  ASSERT_TRUE(steps.Execute(profile, drain, {}).ok());
  EXPECT_FALSE(steps.TakeFinished(profile.name)) << "taken while it runs";
  inner.Release();
  ASSERT_TRUE(woken.WaitFor(profile.name)) << "the drain never finished";
  ASSERT_TRUE(steps.Outstanding(profile.name).has_value());
  EXPECT_TRUE(steps.Outstanding(profile.name)->done);
  EXPECT_FALSE(steps.Outstanding(profile.name)->failed);
  std::optional<absl::StatusOr<ActionResult>> taken = steps.TakeFinished(profile.name);
  ASSERT_TRUE(taken.has_value());
  ASSERT_TRUE(taken->ok()) << taken->status();
  EXPECT_EQ((*taken)->detail, "drained w-0");
  EXPECT_FALSE(steps.Outstanding(profile.name));
  EXPECT_FALSE(steps.TakeFinished(profile.name));
  auto again = steps.Execute(profile, drain, {});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->in_progress) << "answered the step taken already";
  EXPECT_TRUE(inner.WaitStarted(2));
}

TEST(BackgroundStepsTest, ShortStepsRunInline) {
  GatedExecutor inner;
  BackgroundSteps steps(inner);
  auto r = steps.Execute(Profile(), Step(core::ActionKind::kCompleteNode, "w-0"), {});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->in_progress);
  EXPECT_EQ(r->detail, "inline");
}

// While a drain of w-0 runs, no other action of the cluster starts — neither another node's
// install nor an inline uncordon — and none stops it; another cluster's step runs meanwhile.
TEST(BackgroundStepsTest, NoOtherActionOfTheClusterStartsWhileAStepRuns) {
  GatedExecutor inner;
  Woken woken;
  BackgroundSteps steps(inner, woken.Callback());
  const core::ClusterProfile profile = Profile();
  const auto drain = Step(core::ActionKind::kDrainNode, "w-0");
  ASSERT_TRUE(steps.Execute(profile, drain, {}).ok());
  ASSERT_TRUE(inner.WaitStarted(1));
  for (const auto& other :
       {Step(core::ActionKind::kInstallImage, "w-1"), Step(core::ActionKind::kCompleteNode, "w-1"),
        Step(core::ActionKind::kDrainNode, "w-1")}) {
    absl::StatusOr<ActionResult> r = steps.Execute(profile, other, {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->in_progress) << core::ActionKindName(other.kind);
  }
  std::optional<OutstandingStep> outstanding = steps.Outstanding("prod");
  ASSERT_TRUE(outstanding.has_value());
  EXPECT_TRUE(outstanding->Is(drain));
  EXPECT_FALSE(outstanding->done);

  core::ClusterProfile lab = profile;
  lab.name = "lab";
  ASSERT_TRUE(steps.Execute(lab, drain, {}).ok());  // one step per cluster, not per process
  ASSERT_TRUE(inner.WaitStarted(2));
  EXPECT_EQ(inner.stopped, 0) << "a step was stopped for another";

  inner.Release();
  ASSERT_TRUE(woken.WaitFor("prod"));
  EXPECT_TRUE(steps.Outstanding("prod")->done);
  // Finished but no longer asked for: dropped, and the cluster's next action starts.
  const auto install = Step(core::ActionKind::kInstallImage, "w-1");
  ASSERT_TRUE(steps.Execute(profile, install, {}).ok());
  EXPECT_TRUE(steps.Outstanding("prod")->Is(install));
  ASSERT_TRUE(inner.WaitStarted(3));
  EXPECT_EQ(inner.stopped, 0);
}

TEST(BackgroundStepsTest, AFinishedStepWakesItsClusterAndAStoppedOneDoesNot) {
  GatedExecutor inner;
  Woken woken;
  const core::ClusterProfile profile = Profile();
  {
    BackgroundSteps steps(inner, woken.Callback());
    ASSERT_TRUE(steps.Execute(profile, Step(core::ActionKind::kSnapshotEtcd, ""), {}).ok());
    EXPECT_TRUE(woken.clusters().empty()) << "woken before the step finished";
    inner.Release();
    ASSERT_TRUE(woken.WaitFor(profile.name)) << "never woken";
    EXPECT_EQ(woken.clusters(), std::vector<std::string>{profile.name});
    // Woken, the reconcile finds the result there to collect.
    auto collected = steps.Execute(profile, Step(core::ActionKind::kSnapshotEtcd, ""), {});
    ASSERT_TRUE(collected.ok()) << collected.status();
    EXPECT_FALSE(collected->in_progress);
  }
  GatedExecutor blocked;
  {
    BackgroundSteps steps(blocked, woken.Callback());
    ASSERT_TRUE(steps.Execute(profile, Step(core::ActionKind::kDrainNode, "w-0"), {}).ok());
  }  // stopped, not finished
  EXPECT_EQ(blocked.stopped, 1);
  EXPECT_EQ(woken.clusters().size(), 1u) << "a step stopped by the destructor woke its cluster";
}

TEST(BackgroundStepsTest, TheDestructorStopsTheStepsStillRunning) {
  GatedExecutor inner;
  {
    BackgroundSteps steps(inner);
    ASSERT_TRUE(steps.Execute(Profile(), Step(core::ActionKind::kDrainNode, "w-0"), {}).ok());
  }  // stops the drain and waits for it
  EXPECT_EQ(inner.started.Get(), 1);
  EXPECT_EQ(inner.stopped, 1);
}

}  // namespace
}  // namespace tr::reconciler
