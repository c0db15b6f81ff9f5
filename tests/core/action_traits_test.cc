// The rules the reconciler asks core for instead of deciding them itself: what each kind of
// action is to a reconcile (TraitsOf), whether another node may start beside those in flight,
// and what a decision that starts nothing does to a gate wait.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/health_gates.h"
#include "core/rollout_checks.h"
#include "core/rollout_record.h"
#include "core/rollout_types.h"
#include "tests/support/fleet_fixtures.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;

constexpr ActionKind kEveryKind[] = {ActionKind::kNone,
                                     ActionKind::kPrePullImage,
                                     ActionKind::kSnapshotEtcd,
                                     ActionKind::kStartNode,
                                     ActionKind::kCallUpgrade,
                                     ActionKind::kInstallImage,
                                     ActionKind::kDrainNode,
                                     ActionKind::kRebootNode,
                                     ActionKind::kCompleteNode,
                                     ActionKind::kRollbackNode,
                                     ActionKind::kFailNode,
                                     ActionKind::kInstallAhead,
                                     ActionKind::kUnstageNode,
                                     ActionKind::kActivatedEarly,
                                     ActionKind::kRecallStaged,
                                     ActionKind::kWithdrawStaged,
                                     ActionKind::kStartKubernetesUpgrade};

const TimePoint kNow = *ParseTimestamp("2026-12-02T10:00:00Z");

TEST(ActionTraitsTest, EveryKindHasItsOwnNameAsStatusAndLogsSpellIt) {
  std::set<std::string> names;
  for (ActionKind kind : kEveryKind) {
    ASSERT_NE(TraitsOf(kind).name, nullptr);
    EXPECT_EQ(std::string(ActionKindName(kind)), TraitsOf(kind).name);
    names.insert(TraitsOf(kind).name);
  }
  EXPECT_EQ(names.size(), std::size(kEveryKind));
  EXPECT_STREQ(ActionKindName(ActionKind::kStartNode), "start-node");
  EXPECT_STREQ(ActionKindName(ActionKind::kStartKubernetesUpgrade), "start-kubernetes-upgrade");
  EXPECT_STREQ(ActionKindName(static_cast<ActionKind>(99)), "unknown");
}

TEST(ActionTraitsTest, OnlyNothingAndTheHandedOverKubernetesStepAreNotActedOn) {
  std::set<ActionKind> not_acted;
  for (ActionKind kind : kEveryKind) {
    if (!TraitsOf(kind).acts) not_acted.insert(kind);
  }
  EXPECT_EQ(not_acted, (std::set<ActionKind>{ActionKind::kNone,
                                             ActionKind::kStartKubernetesUpgrade}));
  EXPECT_TRUE(TraitsOf(ActionKind::kStartKubernetesUpgrade).handed_over);
}

TEST(ActionTraitsTest, TheTableHoldsTogether) {
  for (ActionKind kind : kEveryKind) {
    const ActionTraits& t = TraitsOf(kind);
    SCOPED_TRACE(t.name);
    // What only records calls no node: nothing of it runs in the background.
    if (t.only_records) {
      EXPECT_FALSE(t.runs_in_background);
    }
    if (t.runs_in_background || t.only_records) {
      EXPECT_TRUE(t.acts);
    }
    // A record may wait only where losing it repeats a step safe to repeat: never a node's
    // start or a call to a node.
    if (t.record_may_wait) {
      EXPECT_FALSE(t.starts_node);
      EXPECT_NE(kind, ActionKind::kCallUpgrade);
      EXPECT_NE(kind, ActionKind::kRebootNode);
      EXPECT_EQ(RecordMayWaitForNext(kind), true);
    } else {
      EXPECT_EQ(RecordMayWaitForNext(kind), false);
    }
    // A step that changes a node cannot keep the look that decided it, nor its etcd.
    if (t.keeps_observation) {
      EXPECT_TRUE(t.only_records || kind == ActionKind::kPrePullImage ||
                  kind == ActionKind::kSnapshotEtcd);
      EXPECT_TRUE(t.keeps_etcd);
    }
    if (t.completes_node) {
      EXPECT_STREQ(t.ends_node, "completed");
    }
  }
}

// What reconciles read of etcd outlives only the steps that leave every member's health,
// membership and leadership alone: no upgrade call (it hands leadership over), no reboot.
TEST(ActionTraitsTest, OnlyStepsThatLeaveEtcdAloneKeepWhatWasReadOfIt) {
  std::set<ActionKind> keep;
  for (ActionKind kind : kEveryKind) {
    if (TraitsOf(kind).keeps_etcd) keep.insert(kind);
  }
  EXPECT_EQ(keep, (std::set<ActionKind>{ActionKind::kPrePullImage, ActionKind::kSnapshotEtcd,
                                        ActionKind::kStartNode, ActionKind::kCompleteNode,
                                        ActionKind::kFailNode, ActionKind::kRecallStaged,
                                        ActionKind::kWithdrawStaged}));
}

TEST(ActionTraitsTest, AFailureIsNotHeldByAStepRunningAndStartsNothing) {
  const ActionTraits& fail = TraitsOf(ActionKind::kFailNode);
  EXPECT_TRUE(fail.only_records);
  EXPECT_FALSE(fail.held_by_running_step);
  EXPECT_FALSE(fail.gated);
  EXPECT_STREQ(fail.ends_node, "failed");
  EXPECT_TRUE(TraitsOf(ActionKind::kStartNode).held_by_running_step);
  EXPECT_TRUE(TraitsOf(ActionKind::kStartNode).gated);
  EXPECT_STREQ(TraitsOf(ActionKind::kRollbackNode).ends_node, "rolled_back");
}

TEST(RoomBesideInFlightTest, WorkersShareUpToMaxParallelWorkersAndAControlPlaneGoesAlone) {
  ClusterProfile profile = MakeProfile(FiveNodes("1.13.9", "1.34.1"), "1.14.2", "1.34.1");
  profile.policy.max_parallel_workers = 2;
  EXPECT_TRUE(RoomBesideInFlight(profile, {}));
  RolloutMemory one_worker = NodeInFlight("w-0", "1.14.2", kNow);
  EXPECT_TRUE(RoomBesideInFlight(profile, one_worker));
  RolloutMemory two_workers = one_worker;
  two_workers.in_flight.push_back(NodeInFlight("w-1", "1.14.2", kNow).in_flight.front());
  EXPECT_FALSE(RoomBesideInFlight(profile, two_workers));
  EXPECT_FALSE(RoomBesideInFlight(profile, NodeInFlight("cp-0", "1.14.2", kNow)));
  profile.policy.max_parallel_workers = 1;
  EXPECT_FALSE(RoomBesideInFlight(profile, one_worker));
}

TEST(GateWaitTest, ADecisionThatStopsTheRolloutOtherwiseEndsTheGateWait) {
  GateState waiting;
  waiting.failing_since = kNow;
  RolloutDecision paused;
  paused.phase = ClusterPhase::kPaused;
  EXPECT_FALSE(AfterDecisionStartingNothing(waiting, paused).failing_since.has_value());
  RolloutDecision gate;
  gate.phase = ClusterPhase::kWaitingForGate;
  EXPECT_EQ(AfterDecisionStartingNothing(waiting, gate).failing_since, kNow);
  RolloutDecision upgrading;
  upgrading.phase = ClusterPhase::kUpgradingTalos;
  EXPECT_EQ(AfterDecisionStartingNothing(waiting, upgrading).failing_since, kNow);
}

}  // namespace
}  // namespace tr::core
