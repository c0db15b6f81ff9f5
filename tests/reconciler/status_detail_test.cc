// `status CLUSTER`: a person reads the nodes, the step in flight, the failure and the history
// of one cluster from its recorded status.
#include "reconciler/app/status_detail.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tr::reconciler {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

const core::TimePoint kNow = *core::ParseTimestamp("2026-12-02T10:30:00Z");

core::ClusterStatus Rolling() {
  core::ClusterStatus s;
  s.cluster = "prod";
  s.phase = core::ClusterPhase::kUpgradingTalos;
  s.message = "upgrading w-1 (2/3) to Talos 1.12.0";
  s.updated = kNow - seconds(45);
  s.desired_commit_attempted = std::string(40, 'c');
  s.desired_commit_applied = std::string(40, 'a');
  s.talos = {"1.11.6", "1.12.0", "1.12.0", core::ComponentState::kInProgress, "", "2/3"};
  s.kubernetes = {"1.34.1", "1.34.1", "1.35.0", core::ComponentState::kIdle, "", ""};
  s.nodes = {{"cp-0", "controlplane", "1.11.6", "1.34.1", true, true, std::nullopt, "", {}, "",
              "boot-1", kNow - std::chrono::hours(2)},
             {"w-0", "worker", "1.12.0", "1.34.1", true, true, std::nullopt,
              "upgraded to Talos 1.12.0 in 6m12s", seconds(372)},
             {"w-1", "worker", "1.11.6", "1.34.1", false, false, kNow - minutes(3), "", {}}};
  core::OperationInFlight op;
  op.node = "w-1";
  op.target = *core::ParseTalosVersion("1.12.0");
  op.phase = core::OperationPhase::kRebootCalled;
  op.started = kNow - minutes(3);
  op.deadline = kNow + minutes(27);
  s.rollout.in_flight = {op};
  s.conditions = {{"TalosUpgrade", true, "InProgress", "2/3", kNow - minutes(10)}};
  s.history = {{kNow - minutes(10), "upgrading w-0 to Talos 1.12.0"},
               {kNow - minutes(4), "w-0 upgraded"},
               {kNow - minutes(3), "upgrading w-1 to Talos 1.12.0"}};
  return s;
}

TEST(StatusDetailTest, ShowsEveryNodeTheStepInFlightAndTheTimeline) {
  const std::string text = RenderClusterDetail(Rolling(), kNow);
  EXPECT_THAT(text, ContainsRegex("Phase +UpgradingTalos: upgrading w-1 \\(2/3\\)"));
  EXPECT_THAT(text, ContainsRegex("Talos +1.11.6 → 1.12.0  in-progress 2/3"));
  EXPECT_THAT(text, ContainsRegex("Applied +aaaaaaaaaaaa\n"));
  EXPECT_THAT(text, ContainsRegex("Attempting +cccccccccccc\n"));
  EXPECT_THAT(text, HasSubstr("(45s ago)"));
  // The step in flight: its phase, since when and how long before its deadline.
  EXPECT_THAT(text, ContainsRegex("In flight\n.*\n  w-1 +1.12.0 +reboot-called +3m ago +in 27m"));
  // Every node, the one in flight with its phase, the unreachable one with when it was seen.
  EXPECT_THAT(text, ContainsRegex("  cp-0 +controlplane +1.11.6 +1.34.1 +- +yes +- +now +2h ago"));
  EXPECT_THAT(text, ContainsRegex("  w-0 +worker +1.12.0 .* upgraded to Talos 1.12.0 in 6m12s"));
  EXPECT_THAT(text, ContainsRegex("  w-1 +worker +1.11.6 +1.34.1 +- +no +reboot-called +3m ago"));
  EXPECT_THAT(text, ContainsRegex("TalosUpgrade +True +InProgress +10m"));
  // The timeline, oldest first, each event with how long until the next.
  EXPECT_THAT(text, HasSubstr("History\n  2026-12-02T10:20:00Z      6m  upgrading w-0 to Talos "
                              "1.12.0\n  2026-12-02T10:26:00Z     60s  w-0 upgraded\n"
                              "  2026-12-02T10:27:00Z      3m  upgrading w-1"));
  EXPECT_THAT(text, Not(HasSubstr("Halted")));
}

TEST(StatusDetailTest, AFailureSaysWhereAndHowToRetry) {
  core::ClusterStatus s = Rolling();
  s.phase = core::ClusterPhase::kUpgradeFailed;
  s.rollout.in_flight.clear();
  s.rollout.failure = core::RolloutFailure{"w-1", *core::ParseTalosVersion("1.12.0"),
                                           "w-1 came back on Talos 1.11.6", kNow - minutes(5)};
  const std::string text = RenderClusterDetail(s, kNow);
  EXPECT_THAT(text, HasSubstr("Halted by a failure of w-1 on Talos 1.12.0, 5m ago:\n"
                              "  w-1 came back on Talos 1.11.6\n"
                              "  Once the cause is fixed: talos-reconciler retry prod"));
  EXPECT_THAT(text, Not(HasSubstr("In flight")));
}

TEST(StatusDetailTest, ShortDurationsRoundDownToOneUnit) {
  EXPECT_EQ(ShortDuration(seconds(-3)), "0s");
  EXPECT_EQ(ShortDuration(seconds(119)), "119s");
  EXPECT_EQ(ShortDuration(minutes(119)), "119m");
  EXPECT_EQ(ShortDuration(std::chrono::hours(47)), "47h");
  EXPECT_EQ(ShortDuration(std::chrono::hours(49)), "2d");
}

}  // namespace
}  // namespace tr::reconciler
