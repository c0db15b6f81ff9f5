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

TEST(RolloutOutcomesTest, BlockedSaysWhyAndActsOnNothing) {
  const RolloutDecision d = Blocked("cannot observe the nodes: permission denied");
  EXPECT_EQ(d.kind, ActionKind::kNone);
  EXPECT_EQ(d.phase, ClusterPhase::kBlocked);
  EXPECT_EQ(d.message, "cannot observe the nodes: permission denied");
  EXPECT_FALSE(d.wait_until.has_value());
}

TEST(RolloutOutcomesTest, ANodeUpgradingIsLookedAtOnTheNodePollButASettleTimeIsWaitedOut) {
  RolloutDecision upgrading = Acting(ActionKind::kNone, "w-0");
  upgrading.wait_until = kLater;
  RolloutMemory memory;
  EXPECT_TRUE(LooksAgainOnNodePoll(upgrading, memory));
  memory.settle_until = kLater;  // no node in flight, the wait is the settle time
  EXPECT_FALSE(LooksAgainOnNodePoll(upgrading, memory));
  memory.in_flight.push_back(OperationInFlight{});
  EXPECT_TRUE(LooksAgainOnNodePoll(upgrading, memory));
  RolloutDecision window = upgrading;
  window.phase = ClusterPhase::kWaitingForWindow;
  EXPECT_FALSE(LooksAgainOnNodePoll(window, {}));
}

TEST(RolloutOutcomesTest, AKubernetesTaskIsFollowedUntilItEndsOrFails) {
  PlanStep step;
  step.type = StepType::kKubernetes;
  step.from = V("1.34.1");
  step.to = V("1.35.0");
  RolloutDecision handed = Acting(ActionKind::kStartKubernetesUpgrade, "");
  KubernetesTask task;
  RolloutDecision d = FollowingKubernetesTask(handed, step, task, kLater);
  EXPECT_EQ(d.kind, ActionKind::kNone);
  EXPECT_EQ(d.phase, ClusterPhase::kUpgradingKubernetes);
  EXPECT_EQ(d.message, "upgrading Kubernetes 1.34.1 → 1.35.0: starting");
  EXPECT_EQ(d.wait_until, kLater);
  task.progress = "kubelets 3/5";
  EXPECT_EQ(FollowingKubernetesTask(handed, step, task, kLater).message,
            "upgrading Kubernetes 1.34.1 → 1.35.0: kubelets 3/5");
  task.state = KubernetesTask::State::kSucceeded;
  EXPECT_EQ(FollowingKubernetesTask(handed, step, task, kLater).message,
            "upgrading Kubernetes 1.34.1 → 1.35.0: done, waiting for the nodes to show it");
  task.state = KubernetesTask::State::kFailed;
  task.component = "kubelet";
  task.node = "w-1";
  task.error = "image pull failed";
  d = FollowingKubernetesTask(handed, step, task, kLater);
  EXPECT_EQ(d.phase, ClusterPhase::kUpgradeFailed);
  EXPECT_EQ(d.node, "w-1");
  EXPECT_EQ(d.message, "Kubernetes upgrade to 1.35.0 failed: kubelet on w-1: image pull failed");
  task.node.clear();
  task.component = "kube-apiserver";
  EXPECT_EQ(FollowingKubernetesTask(handed, step, task, kLater).message,
            "Kubernetes upgrade to 1.35.0 failed: kube-apiserver: image pull failed");
}

}  // namespace
}  // namespace tr::core
