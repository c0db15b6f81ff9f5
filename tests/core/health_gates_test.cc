#include "core/health_gates.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/planner.h"
#include "tests/support/rollout_world.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::HasSubstr;

GateResult Result(std::string name, bool healthy, std::string message) {
  return GateResult{std::move(name), healthy, std::move(message), TimePoint{}};
}

TEST(GateStateTest, TheWaitStartsAtTheFirstFailureAndEndsAtTheFirstPass) {
  const TimePoint t0 = TimePoint{} + minutes(100);
  GateState s = UpdateGateState({}, {Result("a", true, "HTTP 200")}, t0);
  EXPECT_FALSE(s.failing_since.has_value());
  EXPECT_EQ(s.results[0].checked, t0);
  EXPECT_TRUE(GateVerdict(s).passed);
  s = UpdateGateState(s, {Result("a", false, "HTTP 503, expected 200"), Result("b", true, "")},
                      t0 + minutes(1));
  EXPECT_EQ(s.failing_since, t0 + minutes(1));
  s = UpdateGateState(s, {Result("a", true, ""), Result("b", false, "no result")},
                      t0 + minutes(2));
  EXPECT_EQ(s.failing_since, t0 + minutes(1));  // still failing: the same wait
  ExtraGateResult v = GateVerdict(s);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.message, "b: no result");
  EXPECT_EQ(v.failing_since, t0 + minutes(1));
  s = UpdateGateState(s, {Result("a", true, ""), Result("b", true, "")}, t0 + minutes(3));
  EXPECT_FALSE(s.failing_since.has_value());
}

// A profile with one health check (the rollout waits only on checks its profile sets).
ClusterProfile WithHealthCheck(ClusterProfile profile) {
  HealthCheck check;
  check.name = "api";
  check.spec = HttpCheck{.endpoint = {.url = "http://127.0.0.1:9/healthz", .ca_file = ""},
                         .expect_status = 200};
  profile.policy.health_checks = {check};
  return profile;
}

struct GateWorld {
  std::vector<NodeDef> nodes = FiveNodes("1.11.6", "1.34.1");
  RolloutWorld world{WithHealthCheck(MakeProfile(nodes, "1.12.0", "1.34.1")), MakeObserved(nodes)};
  RolloutMemory memory;

  RolloutDecision Decide(ExtraGateResult gates) {
    ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                   ReleaseCatalog::BuiltIn());
    RolloutInput in{world.profile(), plan, world.observed(), memory, {}, gates, world.now()};
    return DecideNextAction(in);
  }
};

TEST(GateRolloutTest, AFailingGateHoldsTheNextNodeAndBacksOff) {
  GateWorld w;
  const TimePoint since = w.world.now();
  RolloutDecision d = w.Decide({false, "api: HTTP 503, expected 200", since});
  EXPECT_EQ(d.kind, ActionKind::kNone);
  EXPECT_EQ(d.phase, ClusterPhase::kWaitingForGate);
  EXPECT_THAT(d.message, HasSubstr("api: HTTP 503, expected 200"));
  EXPECT_EQ(d.wait_until, w.world.now() + seconds(10));  // the poll interval at first
  w.world.AdvanceTo(since + minutes(10));
  d = w.Decide({false, "api: HTTP 503, expected 200", since});
  EXPECT_EQ(d.phase, ClusterPhase::kWaitingForGate);
  EXPECT_EQ(d.wait_until, w.world.now() + seconds(60));  // grown, capped at a minute
  EXPECT_THAT(d.message, HasSubstr("failing for 10m of gateTimeout 30m"));
  w.world.AdvanceTo(since + minutes(29) + seconds(50));
  EXPECT_EQ(w.Decide({false, "x", since}).wait_until, since + minutes(30));  // not past it
}

TEST(GateRolloutTest, AfterGateTimeoutTheRolloutFails) {
  GateWorld w;
  w.world.profile().policy.gate_timeout = seconds(90);
  const TimePoint since = w.world.now();
  w.world.AdvanceTo(since + seconds(90));
  RolloutDecision d = w.Decide({false, "errors: value 3 > max 0", since});
  EXPECT_EQ(d.kind, ActionKind::kFailNode);
  EXPECT_EQ(d.phase, ClusterPhase::kUpgradeFailed);
  ASSERT_TRUE(d.failure.has_value());
  EXPECT_EQ(d.failure->talos_target, w.world.profile().talos_version);
  EXPECT_EQ(d.message,
            "health check failing for longer than gateTimeout 1m30s: errors: value 3 > max 0");
  // Recorded, the failure halts the cluster.
  Record(d, w.memory, w.world.profile().policy, w.world.now());
  EXPECT_EQ(w.Decide({}).phase, ClusterPhase::kUpgradeFailed);
}

TEST(GateRolloutTest, APassingGateLetsTheNextNodeStart) {
  GateWorld w;
  // From 1.11.6 nothing is pre-pulled: the first worker starts.
  EXPECT_EQ(w.Decide({true, "", std::nullopt}).kind, ActionKind::kStartNode);
}

}  // namespace
}  // namespace tr::core
