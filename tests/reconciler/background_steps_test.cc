#include "reconciler/background_steps.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

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

TEST(BackgroundStepsTest, AnotherStepOfTheClusterStopsTheOneRunning) {
  GatedExecutor inner;
  {
    BackgroundSteps steps(inner);
    const core::ClusterProfile profile = Profile();
    ASSERT_TRUE(steps.Execute(profile, Step(core::ActionKind::kDrainNode, "w-0"), {}).ok());
    ASSERT_TRUE(steps.Execute(profile, Step(core::ActionKind::kDrainNode, "w-1"), {}).ok());
  }  // the destructor stops the second and waits for both
  EXPECT_EQ(inner.started, 2);
  EXPECT_EQ(inner.stopped, 2);
}

}  // namespace
}  // namespace tr::reconciler
