// One list of start checks drives both the plan's text and the rollout (start_checks.h): for
// every check, the plan names it and DecideNextAction holds on it, before a Talos node and
// before a Kubernetes step alike.
#include "core/start_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "core/gates.h"
#include "core/planner.h"
#include "tests/support/fleet_fixtures.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;
using std::chrono::hours;
using std::chrono::minutes;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// A five-node cluster about to start either a Talos step or a Kubernetes step, with every
// start check passing until a case makes one fail.
struct StartWorld {
  explicit StartWorld(StepType type)
      : nodes(type == StepType::kTalos ? FiveNodes("1.11.6", "1.34.1")
                                       : FiveNodes("1.12.0", "1.34.1")),
        profile(MakeProfile(nodes, "1.12.0", type == StepType::kTalos ? "1.34.1" : "1.35.0")),
        observed(MakeObserved(nodes)) {}

  ClusterPlan Plan() const {
    return PlanCluster(profile, observed, SupportMatrix::BuiltIn(), ReleaseCatalog::BuiltIn());
  }
  RolloutDecision Decide(const ClusterPlan& plan) const {
    RolloutInput in{profile, plan, observed, memory, window, gates, now};
    in.promotion = promotion;
    in.kubernetes_step_started = kubernetes_started;
    return DecideNextAction(in);
  }

  std::vector<NodeDef> nodes;
  ClusterProfile profile;
  ObservedCluster observed;
  RolloutMemory memory;
  WindowState window;
  ExtraGateResult gates;
  PromotionVerdict promotion;
  bool kubernetes_started = false;
  TimePoint now = TimePoint{} + hours(1000);
};

// Makes `check` apply to the profile and fail; returns what the decision's message says.
std::string Fail(StartCheck check, StartWorld& w) {
  switch (check) {
    case StartCheck::kPaused:
      w.profile.policy.paused = true;
      return "paused by policy";
    case StartCheck::kPromotion:
      w.profile.promotion = Promotion{{{"staging", 3, 5}}, hours(24)};
      w.promotion = {false, "waiting for staging (Ready on 1.12.0 for 3h of 24h)", std::nullopt};
      return "waiting for staging";
    case StartCheck::kWindow:
      w.profile.policy.windows = {MaintenanceWindow{{0, 6}, minutes(120), hours(4), "UTC"}};
      w.window = {false, w.now + hours(5)};
      return "waiting for the next maintenance window";
    case StartCheck::kNodesReady:
      w.observed.nodes[3].ready = false;
      return "node w-0 is not Ready";
    case StartCheck::kEtcdQuorum:
      w.observed.nodes[2].etcd_healthy = false;
      return "etcd member on cp-2 is not healthy";
    case StartCheck::kHealthChecks: {
      HealthCheck c;
      c.name = "ingress";
      c.spec = HttpCheck{.endpoint = {.url = "http://127.0.0.1:9/healthz", .ca_file = ""},
                         .expect_status = 200};
      w.profile.policy.health_checks = {c};
      w.gates = {false, "ingress: HTTP 503, expected 200", w.now};
      return "ingress: HTTP 503, expected 200";
    }
  }
  return "";
}

ClusterPhase HeldPhase(StartCheck check) {
  switch (check) {
    case StartCheck::kPaused:
      return ClusterPhase::kPaused;
    case StartCheck::kPromotion:
      return ClusterPhase::kWaitingForPromotion;
    case StartCheck::kWindow:
      return ClusterPhase::kWaitingForWindow;
    case StartCheck::kHealthChecks:
      return ClusterPhase::kWaitingForGate;
    case StartCheck::kNodesReady:
    case StartCheck::kEtcdQuorum:
      return ClusterPhase::kBlocked;
  }
  return ClusterPhase::kReady;
}

// The world runs Talos below 1.13, where nothing is pre-pulled: a Talos step starts a node.
ActionKind FirstStart(StepType type) {
  return type == StepType::kTalos ? ActionKind::kStartNode : ActionKind::kStartKubernetesUpgrade;
}

class StartCheckTest : public ::testing::TestWithParam<std::tuple<StartCheck, StepType>> {};

TEST_P(StartCheckTest, ThePlanNamesItAndTheRolloutHoldsOnIt) {
  const auto [check, type] = GetParam();
  StartWorld w(type);
  ClusterPlan plan = w.Plan();
  ASSERT_EQ(plan.status, PlanStatus::kPlanned) << plan.message;
  ASSERT_EQ(plan.steps.front().type, type);
  ASSERT_EQ(w.Decide(plan).kind, FirstStart(type));  // nothing holds it yet

  const std::string why = Fail(check, w);
  plan = w.Plan();
  const std::vector<StartCheck> listed = StartChecks(w.profile);
  EXPECT_THAT(listed, Contains(check));
  const std::vector<std::string> lines = DescribeStartCheck(check, w.profile);
  ASSERT_FALSE(lines.empty());
  for (const std::string& line : lines) EXPECT_THAT(plan.gates, Contains(line));

  const RolloutDecision d = w.Decide(plan);
  EXPECT_EQ(d.kind, ActionKind::kNone) << d.message;
  EXPECT_EQ(d.phase, HeldPhase(check)) << d.message;
  EXPECT_THAT(d.message, HasSubstr(why));
}

INSTANTIATE_TEST_SUITE_P(EveryCheckBothSteps, StartCheckTest,
                         ::testing::Combine(::testing::ValuesIn(kAllStartChecks),
                                            ::testing::Values(StepType::kTalos,
                                                              StepType::kKubernetes)));

TEST(StartChecksTest, OnlyWhatTheProfileSetsIsListedAndPlanned) {
  StartWorld w(StepType::kTalos);
  EXPECT_EQ(StartChecks(w.profile),
            (std::vector<StartCheck>{StartCheck::kNodesReady, StartCheck::kEtcdQuorum}));
  const ClusterPlan plan = w.Plan();
  for (const std::string& gate : plan.gates) {
    EXPECT_THAT(gate, Not(HasSubstr("maintenance window")));
    EXPECT_THAT(gate, Not(HasSubstr("health check")));
    EXPECT_THAT(gate, Not(HasSubstr("paused")));
    EXPECT_THAT(gate, Not(HasSubstr("promotion")));
  }
  // Every "pre-flight:" line of the plan is one of the listed checks' lines.
  std::vector<std::string> listed;
  for (StartCheck c : StartChecks(w.profile)) {
    for (const std::string& line : DescribeStartCheck(c, w.profile)) listed.push_back(line);
  }
  for (const std::string& gate : plan.gates) {
    if (gate.starts_with("pre-flight:")) {
      EXPECT_THAT(listed, Contains(gate));
    }
  }
}

TEST(StartChecksTest, AKubernetesStepAlreadyStartedIsSeenThrough) {
  StartWorld w(StepType::kKubernetes);
  Fail(StartCheck::kWindow, w);
  Fail(StartCheck::kNodesReady, w);  // a kubelet restarting mid-upgrade
  w.kubernetes_started = true;
  EXPECT_EQ(w.Decide(w.Plan()).kind, ActionKind::kStartKubernetesUpgrade);
}

TEST(StartChecksTest, ThePlanShowsEachHealthCheckLastAnswer) {
  StartWorld w(StepType::kTalos);
  Fail(StartCheck::kHealthChecks, w);
  HealthCheck other = w.profile.policy.health_checks.front();
  other.name = "errors";
  w.profile.policy.health_checks.push_back(other);
  w.profile.policy.on_failure = FailureAction::kRollback;
  GateState last;
  last.results = {GateResult{"ingress", false, "HTTP 503, expected 200",
                             *ParseTimestamp("2026-11-23T10:00:00Z")}};
  last.failing_since = *ParseTimestamp("2026-11-23T09:58:00Z");
  StartCheckAnswers answers;
  answers.gates = &last;
  const std::vector<std::string> gates = PlanGates(w.profile, w.Plan(), &answers);
  EXPECT_THAT(
      gates,
      Contains(HasSubstr("health check ingress: GET http://127.0.0.1:9/healthz answers 200")));
  EXPECT_THAT(
      gates,
      Contains(HasSubstr("; last: unhealthy \"HTTP 503, expected 200\" at 2026-11-23T10:00:00Z")));
  EXPECT_THAT(gates, Contains(HasSubstr("health check errors: ")));
  EXPECT_THAT(gates, Contains(HasSubstr("errors: GET http://127.0.0.1:9/healthz answers 200 "
                                        "(within 10s), before the first node of a step, before "
                                        "each further node (after settle) and before a "
                                        "Kubernetes step; last: not checked yet")));
  EXPECT_THAT(gates, Contains(HasSubstr(
                         "the rollout halts without rolling any node back (onFailure: rollback "
                         "applies to a failed node only); failing since 2026-11-23T09:58:00Z")));
}

TEST(StartChecksTest, ThePlanShowsWherePromotionStands) {
  StartWorld w(StepType::kTalos);
  Fail(StartCheck::kPromotion, w);
  StartCheckAnswers answers;
  answers.promotion = w.promotion;
  EXPECT_THAT(PlanGates(w.profile, w.Plan(), &answers),
              Contains("promotion: starts only after staging ran the new versions, Ready, for "
                       "24h; now: waiting for staging (Ready on 1.12.0 for 3h of 24h)"));
  answers.promotion = PromotionVerdict{};
  EXPECT_THAT(PlanGates(w.profile, w.Plan(), &answers), Contains(HasSubstr("for 24h; now: ready")));
}

}  // namespace
}  // namespace tr::core
