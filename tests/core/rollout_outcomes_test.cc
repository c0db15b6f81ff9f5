// The transitions that follow an action, made in core: a refusal halts, a running step waits, a
// step of another action holds this one, a dry run only says.
#include "core/rollout_outcomes.h"

#include <gtest/gtest.h>

#include "tests/support/fleet_fixtures.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;

const TimePoint kNow = *ParseTimestamp("2026-11-27T10:00:00Z");
const TimePoint kLater = kNow + std::chrono::seconds(2);

RolloutDecision Acting(ActionKind kind, std::string node) {
  RolloutDecision d;
  d.kind = kind;
  d.phase = ClusterPhase::kUpgradingTalos;
  d.message = "upgrading " + node;
  d.node = std::move(node);
  d.image = "installer:v1.14.2";
  d.progress = {1, 5};
  return d;
}

TEST(RolloutOutcomesTest, ARefusalHaltsTheClusterInTheRefusersWords) {
  const ClusterProfile profile = MakeProfile(FiveNodes("1.13.9", "1.34.1"), "1.14.2", "1.34.1");
  const RolloutDecision d =
      ActionRefused(Acting(ActionKind::kCallUpgrade, "w-1"), profile, "image not found", kNow);
  EXPECT_EQ(d.kind, ActionKind::kFailNode);
  EXPECT_EQ(d.phase, ClusterPhase::kUpgradeFailed);
  EXPECT_EQ(d.message, "call-upgrade on w-1 failed: image not found");
  ASSERT_TRUE(d.failure.has_value());
  EXPECT_EQ(d.failure->node, "w-1");
  EXPECT_EQ(d.failure->talos_target, V("1.14.2"));
  EXPECT_EQ(d.failure->message, d.message);
  EXPECT_EQ(d.failure->at, kNow);
  // A step of the whole cluster is named by the cluster.
  const RolloutDecision snapshot =
      ActionRefused(Acting(ActionKind::kSnapshotEtcd, ""), profile, "no space left", kNow);
  EXPECT_EQ(snapshot.message, "snapshot-etcd on " + profile.name + " failed: no space left");
  EXPECT_EQ(snapshot.failure->node, "");
}

TEST(RolloutOutcomesTest, AStepStillRunningWaitsAndSaysWhatItDoes) {
  RolloutDecision pull = Acting(ActionKind::kPrePullImage, "");
  pull.nodes = {"w-0", "w-1"};
  const RolloutDecision waiting = StillRunning(pull, "", kLater);
  EXPECT_EQ(waiting.kind, ActionKind::kNone);
  EXPECT_EQ(waiting.phase, ClusterPhase::kUpgradingTalos);
  EXPECT_EQ(waiting.message, "pre-pulling installer:v1.14.2 on 2 node(s) (1/5)");
  EXPECT_EQ(waiting.wait_until, kLater);
  const RolloutDecision busy =
      StillRunning(Acting(ActionKind::kDrainNode, "w-0"), "the node reports one in progress", kLater);
  EXPECT_EQ(busy.message, "draining w-0 before its reboot: the node reports one in progress (1/5)");
  // An action without words of its own keeps the decision's.
  EXPECT_EQ(StillRunning(Acting(ActionKind::kCallUpgrade, "w-0"), "", kLater).message,
            "upgrading w-0 (1/5)");
}

TEST(RolloutOutcomesTest, AStepOfAnotherActionHoldsThisOne) {
  const RolloutDecision held =
      HeldByRunningStep(Acting(ActionKind::kDrainNode, "w-1"), ActionKind::kInstallImage, "w-0",
                        kLater);
  EXPECT_EQ(held.kind, ActionKind::kNone);
  EXPECT_EQ(held.message, "waiting for install-image on w-0 to finish before drain-node on w-1 (1/5)");
  EXPECT_EQ(held.wait_until, kLater);
  EXPECT_EQ(HeldByRunningStep(Acting(ActionKind::kSnapshotEtcd, ""), ActionKind::kPrePullImage, "",
                              kLater)
                .message,
            "waiting for pre-pull-image to finish before snapshot-etcd (1/5)");
}

TEST(RolloutOutcomesTest, ADryRunOnlySaysWhatItWouldDo) {
  const RolloutDecision d = DryRun(Acting(ActionKind::kCallUpgrade, "w-1"));
  EXPECT_EQ(d.kind, ActionKind::kCallUpgrade);
  EXPECT_EQ(d.message, "dry run, not done: upgrading w-1");
}

}  // namespace
}  // namespace tr::core
