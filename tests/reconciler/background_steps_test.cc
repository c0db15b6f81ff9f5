#include "reconciler/operations/background_steps.h"

#include <gtest/gtest.h>

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
    ++started;
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
  std::atomic<int> started{0};
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

core::ClusterProfile Profile() {
  using namespace core::testing_fixtures;
  return MakeProfile(FiveNodes("1.13.9", "1.34.1"), "1.14.2", "1.34.1");
}

TEST(BackgroundStepsTest, ALongStepRunsOffTheCallerAndIsCollectedWhenDone) {
  GatedExecutor inner;
  BackgroundSteps steps(inner);
  const core::ClusterProfile profile = Profile();
  const auto drain = Step(core::ActionKind::kDrainNode, "w-0");
  // The caller gets its thread back at once, while the drain is still blocked.
  auto first = steps.Execute(profile, drain, {});
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->in_progress);
  auto again = steps.Execute(profile, drain, {});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->in_progress);
  inner.Release();
  absl::StatusOr<ActionResult> done = ActionResult{"", "", true};
  (void)test_support::WaitUntil([&] {
    done = steps.Execute(profile, drain, {});
    return !done.ok() || !done->in_progress;
  });  // asserted below
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(done->in_progress);
  EXPECT_EQ(done->detail, "drained w-0");
  EXPECT_EQ(inner.started, 1) << "the step ran more than once";
}

TEST(BackgroundStepsTest, ShortStepsRunInline) {
  GatedExecutor inner;
  BackgroundSteps steps(inner);
  auto r = steps.Execute(Profile(), Step(core::ActionKind::kCompleteNode, "w-0"), {});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->in_progress);
  EXPECT_EQ(r->detail, "inline");
}

// Polls until `condition` holds, for at most 30 s.
bool Eventually(const std::function<bool()>& condition) {
  return test_support::WaitUntil(condition, 30s);
}

// While a drain of w-0 runs, no other action of the cluster starts — neither another node's
// install nor an inline uncordon — and none stops it; another cluster's step runs meanwhile.
TEST(BackgroundStepsTest, NoOtherActionOfTheClusterStartsWhileAStepRuns) {
  GatedExecutor inner;
  BackgroundSteps steps(inner);
  const core::ClusterProfile profile = Profile();
  const auto drain = Step(core::ActionKind::kDrainNode, "w-0");
  ASSERT_TRUE(steps.Execute(profile, drain, {}).ok());
  ASSERT_TRUE(Eventually([&] { return inner.started == 1; }));
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
  ASSERT_TRUE(Eventually([&] { return inner.started == 2; }));
  EXPECT_EQ(inner.stopped, 0) << "a step was stopped for another";

  inner.Release();
  ASSERT_TRUE(Eventually([&] { return steps.Outstanding("prod")->done; }));
  // Finished but no longer asked for: dropped, and the cluster's next action starts.
  const auto install = Step(core::ActionKind::kInstallImage, "w-1");
  ASSERT_TRUE(steps.Execute(profile, install, {}).ok());
  EXPECT_TRUE(steps.Outstanding("prod")->Is(install));
  ASSERT_TRUE(Eventually([&] { return inner.started == 3; }));
  EXPECT_EQ(inner.stopped, 0);
}

TEST(BackgroundStepsTest, AFinishedStepWakesItsClusterAndAStoppedOneDoesNot) {
  GatedExecutor inner;
  std::mutex mu;
  std::vector<std::string> woken;
  auto wake = [&](const std::string& cluster) {
    std::lock_guard lock(mu);
    woken.push_back(cluster);
  };
  auto woken_now = [&] {
    std::lock_guard lock(mu);
    return woken;
  };
  const core::ClusterProfile profile = Profile();
  {
    BackgroundSteps steps(inner, wake);
    ASSERT_TRUE(steps.Execute(profile, Step(core::ActionKind::kSnapshotEtcd, ""), {}).ok());
    EXPECT_TRUE(woken_now().empty()) << "woken before the step finished";
    inner.Release();
    ASSERT_TRUE(Eventually([&] { return !woken_now().empty(); })) << "never woken";
    EXPECT_EQ(woken_now(), std::vector<std::string>{profile.name});
    // Woken, the reconcile finds the result there to collect.
    auto collected = steps.Execute(profile, Step(core::ActionKind::kSnapshotEtcd, ""), {});
    ASSERT_TRUE(collected.ok()) << collected.status();
    EXPECT_FALSE(collected->in_progress);
  }
  GatedExecutor blocked;
  {
    BackgroundSteps steps(blocked, wake);
    ASSERT_TRUE(steps.Execute(profile, Step(core::ActionKind::kDrainNode, "w-0"), {}).ok());
  }  // stopped, not finished
  EXPECT_EQ(blocked.stopped, 1);
  EXPECT_EQ(woken_now().size(), 1u) << "a step stopped by the destructor woke its cluster";
}

TEST(BackgroundStepsTest, TheDestructorStopsTheStepsStillRunning) {
  GatedExecutor inner;
  {
    BackgroundSteps steps(inner);
    ASSERT_TRUE(steps.Execute(Profile(), Step(core::ActionKind::kDrainNode, "w-0"), {}).ok());
  }  // stops the drain and waits for it
  EXPECT_EQ(inner.started, 1);
  EXPECT_EQ(inner.stopped, 1);
}

}  // namespace
}  // namespace tr::reconciler
