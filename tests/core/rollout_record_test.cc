#include "core/rollout_record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/planner.h"
#include "tests/support/rollout_world.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;

// What a rollout records before its first call to a node, and how the reconciler pushes those
// records: one that may wait for the next (RecordMayWaitForNext) goes out with it.
struct BeforeFirstCall {
  std::vector<std::string> recorded;  // every decision recorded, by ActionKindName
  std::vector<RolloutMemory> pushes;  // the rollout memory of each push, in order
  RolloutDecision call;               // the first call to a node
};

BeforeFirstCall RecordsBeforeFirstCall(RolloutWorld& world) {
  BeforeFirstCall run;
  RolloutMemory mem;
  for (int i = 0; i < 50; ++i) {
    ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                   ReleaseCatalog::BuiltIn());
    RolloutDecision d =
        DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
    if (d.kind == ActionKind::kCallUpgrade || d.kind == ActionKind::kInstallImage) {
      run.call = d;
      return run;
    }
    if (d.kind == ActionKind::kNone) {
      ADD_FAILURE() << "waited before the first call: " << d.message;
      return run;
    }
    world.Apply(d);
    Record(d, mem, world.profile().policy, world.now());
    run.recorded.push_back(ActionKindName(d.kind));
    if (!RecordMayWaitForNext(d.kind)) run.pushes.push_back(mem);
  }
  ADD_FAILURE() << "no call to a node after 50 decisions";
  return run;
}

// A cluster Ready on `from` whose desired Talos moves to `to`.
RolloutWorld ReadyWorldMovedTo(const std::vector<NodeDef>& nodes, const std::string& to) {
  RolloutWorld world(MakeProfile(nodes, nodes.front().talos, "1.34.1"), MakeObserved(nodes));
  ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                 ReleaseCatalog::BuiltIn());
  RolloutMemory none;
  EXPECT_EQ(DecideNextAction({world.profile(), plan, world.observed(), none, {}, {}, world.now()})
                .phase,
            ClusterPhase::kReady);
  world.profile().talos_version = V(to);
  return world;
}

// The one push before the call is the node's write-ahead record: it names the call's node and
// image, the boot it must still be on, and which path calls it.
void ExpectNamesTheCall(const RolloutMemory& pushed, const RolloutDecision& call, bool lifecycle) {
  ASSERT_EQ(pushed.in_flight.size(), 1u);
  const OperationInFlight& op = pushed.in_flight.front();
  EXPECT_EQ(op.node, call.node);
  EXPECT_EQ(op.image, call.image);
  EXPECT_EQ(op.boot_id_before, "boot-" + call.node);
  EXPECT_EQ(op.lifecycle, lifecycle);
  EXPECT_EQ(op.phase, OperationPhase::kRecorded);
}

TEST(RolloutRecordTest, BelowTalos113TheFirstRecordIsTheNodesStartAndTheOnlyPushBeforeTheCall) {
  RolloutWorld world = ReadyWorldMovedTo(FiveNodes("1.11.6", "1.34.1"), "1.12.0");
  const BeforeFirstCall run = RecordsBeforeFirstCall(world);
  EXPECT_EQ(run.recorded, std::vector<std::string>{"start-node"});
  EXPECT_EQ(run.call.kind, ActionKind::kCallUpgrade);
  EXPECT_EQ(run.call.node, "w-0");
  ASSERT_EQ(run.pushes.size(), 1u);
  ExpectNamesTheCall(run.pushes.front(), run.call, /*lifecycle=*/false);
  // Nothing was pulled, and nothing says it was.
  EXPECT_TRUE(world.pulled().empty());
  EXPECT_EQ(run.pushes.front().prepulled_image, "");
}

TEST(RolloutRecordTest, From113ThePrePullIsPushedWithTheNodesStart) {
  RolloutWorld world = ReadyWorldMovedTo(FiveNodes("1.13.9", "1.34.1"), "1.14.2");
  const BeforeFirstCall run = RecordsBeforeFirstCall(world);
  EXPECT_EQ(run.recorded, (std::vector<std::string>{"pre-pull-image", "start-node"}));
  EXPECT_EQ(run.call.kind, ActionKind::kInstallImage);
  EXPECT_EQ(run.call.node, "w-0");
  // Every node pulled the image it is about to install, once.
  ASSERT_EQ(world.pulled().size(), 5u);
  for (const auto& [node, images] : world.pulled()) {
    EXPECT_EQ(images, std::vector<std::string>{run.call.image}) << node;
  }
  ASSERT_EQ(run.pushes.size(), 1u);
  ExpectNamesTheCall(run.pushes.front(), run.call, /*lifecycle=*/true);
  EXPECT_EQ(run.pushes.front().prepulled_image, run.call.image);
}

TEST(RolloutRecordTest, BeforeTheFirstControlPlaneTheSnapshotIsPushedWithItsStart) {
  const std::vector<NodeDef> control_planes = {
      {"cp-0", NodeRole::kControlPlane, "1.11.6", "1.34.1"},
      {"cp-1", NodeRole::kControlPlane, "1.11.6", "1.34.1", true},
      {"cp-2", NodeRole::kControlPlane, "1.11.6", "1.34.1"}};
  RolloutWorld world = ReadyWorldMovedTo(control_planes, "1.12.0");
  const BeforeFirstCall run = RecordsBeforeFirstCall(world);
  EXPECT_EQ(run.recorded, (std::vector<std::string>{"snapshot-etcd", "start-node"}));
  EXPECT_EQ(run.call.kind, ActionKind::kCallUpgrade);
  ASSERT_EQ(run.pushes.size(), 1u);
  ExpectNamesTheCall(run.pushes.front(), run.call, /*lifecycle=*/false);
  EXPECT_EQ(run.pushes.front().etcd_snapshot_image, run.call.image);
  EXPECT_EQ(run.pushes.front().prepulled_image, "");
}

// The install never reached w-0 and w-0 rebooted by itself: while the operation is only
// recorded, its boot stops guarding it, and the call on the new boot records that boot. An
// operation past kRecorded (the node may have been asked) keeps its boot.
TEST(RolloutRecordTest, ACallThatNeverReachedItsNodeLetsItBeAskedOnItsNewBoot) {
  RolloutWorld world = ReadyWorldMovedTo(FiveNodes("1.13.9", "1.34.1"), "1.14.2");
  const BeforeFirstCall run = RecordsBeforeFirstCall(world);
  ASSERT_EQ(run.call.kind, ActionKind::kInstallImage);
  ASSERT_EQ(run.pushes.size(), 1u);
  NodeObservation* w0 = world.observed().FindNode("w-0");
  w0->boot_id = "boot-w-0-again";
  const auto decide = [&](const RolloutMemory& mem) {
    ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                   ReleaseCatalog::BuiltIn());
    return DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
  };
  EXPECT_EQ(decide(run.pushes.front()).kind, ActionKind::kNone) << "asked on another boot";

  RolloutMemory mem = AfterCallNeverReceived(run.pushes.front(), "w-0");
  EXPECT_EQ(mem.in_flight.front().boot_id_before, "");
  const RolloutDecision call = decide(mem);
  EXPECT_EQ(call.kind, ActionKind::kInstallImage);
  EXPECT_EQ(call.boot_id, "boot-w-0-again");
  Record(call, mem, world.profile().policy, world.now());
  EXPECT_EQ(mem.in_flight.front().phase, OperationPhase::kInstalled);
  EXPECT_EQ(mem.in_flight.front().boot_id_before, "boot-w-0-again");
  EXPECT_EQ(AfterCallNeverReceived(mem, "w-0"), mem);
}

// w-0's install went through, but w-0 is back on its old Talos on another boot than the one
// recorded: the boot stops guarding the operation only then, and the install's decision,
// taken again, records the boot it came back on.
TEST(RolloutRecordTest, AnInstallThatWentThroughOnAnotherBootIsRecordedOnThatBoot) {
  RolloutWorld world = ReadyWorldMovedTo(FiveNodes("1.13.9", "1.34.1"), "1.14.2");
  const BeforeFirstCall run = RecordsBeforeFirstCall(world);
  ASSERT_EQ(run.call.kind, ActionKind::kInstallImage);
  ASSERT_EQ(run.pushes.size(), 1u);
  const RolloutMemory& recorded = run.pushes.front();
  const std::string image = run.call.image;
  NodeObservation w0 = *world.observed().FindNode("w-0");
  // On the recorded boot the install is collected as it is.
  EXPECT_EQ(AfterInstallOnAnotherBoot(recorded, w0, image), recorded);
  w0.boot_id = "boot-w-0-again";
  {
    NodeObservation booting = w0;
    booting.stage = MachineStage::kBooting;
    EXPECT_EQ(AfterInstallOnAnotherBoot(recorded, booting, image), recorded) << "not back yet";
    NodeObservation on_target = w0;
    on_target.talos = V("1.14.2");
    EXPECT_EQ(AfterInstallOnAnotherBoot(recorded, on_target, image), recorded) << "booted it";
    EXPECT_EQ(AfterInstallOnAnotherBoot(recorded, w0, image + "-other"), recorded);
    RolloutMemory installed = recorded;
    installed.in_flight.front().phase = OperationPhase::kInstalled;
    EXPECT_EQ(AfterInstallOnAnotherBoot(installed, w0, image), installed) << "past kRecorded";
  }

  RolloutMemory mem = AfterInstallOnAnotherBoot(recorded, w0, image);
  ASSERT_EQ(mem.in_flight.front().boot_id_before, "");
  *world.observed().FindNode("w-0") = w0;
  ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                 ReleaseCatalog::BuiltIn());
  const RolloutDecision collect =
      DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
  EXPECT_EQ(collect.kind, ActionKind::kInstallImage);
  EXPECT_EQ(collect.image, image);
  Record(collect, mem, world.profile().policy, world.now());
  EXPECT_EQ(mem.in_flight.front().phase, OperationPhase::kInstalled);
  EXPECT_EQ(mem.in_flight.front().boot_id_before, "boot-w-0-again");
}

// Decides, applies and records each step through the first of `kind`; returns those decisions
// and the one after it.
std::vector<RolloutDecision> DecisionsThrough(RolloutWorld& world, ActionKind kind) {
  std::vector<RolloutDecision> decided;
  RolloutMemory mem;
  const auto decide = [&] {
    ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                   ReleaseCatalog::BuiltIn());
    return DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
  };
  for (int i = 0; i < 50; ++i) {
    decided.push_back(decide());
    const RolloutDecision& d = decided.back();
    if (d.kind == ActionKind::kNone) {
      ADD_FAILURE() << "waited before " << ActionKindName(kind) << ": " << d.message;
      return decided;
    }
    world.Apply(d);
    Record(d, mem, world.profile().policy, world.now());
    if (d.kind == kind) {
      decided.push_back(decide());
      return decided;
    }
  }
  ADD_FAILURE() << "no " << ActionKindName(kind) << " after 50 decisions";
  return decided;
}

const RolloutDecision* FindDecision(const std::vector<RolloutDecision>& decided,
                                    ActionKind kind) {
  for (const RolloutDecision& d : decided) {
    if (d.kind == kind) return &d;
  }
  return nullptr;
}

// The decision of `kind` in `decided` (DecisionsThrough's last but one) says `message`, and so
// does the wait decided after it.
void ExpectTheWaitAfterSaysWhatTheCallSaid(const std::vector<RolloutDecision>& decided,
                                           ActionKind kind, const std::string& message) {
  ASSERT_GE(decided.size(), 2u);
  const RolloutDecision& call = decided[decided.size() - 2];
  const RolloutDecision& after = decided.back();
  ASSERT_EQ(call.kind, kind);
  EXPECT_EQ(call.message, message);
  EXPECT_EQ(after.kind, ActionKind::kNone);
  EXPECT_EQ(after.message, call.message);
}

// The record made before the Upgrade call says what the look after the call says of the node:
// that look's status is then the one recorded, and no status file is written for it.
TEST(RolloutRecordTest, TheUpgradeCallsRecordSaysWhatTheLookAfterItSays) {
  RolloutWorld world = ReadyWorldMovedTo(FiveNodes("1.11.6", "1.34.1"), "1.12.0");
  const std::vector<RolloutDecision> decided = DecisionsThrough(world, ActionKind::kCallUpgrade);
  EXPECT_EQ(world.observed().FindNode("w-0")->stage, MachineStage::kUpgrading);
  ExpectTheWaitAfterSaysWhatTheCallSaid(decided, ActionKind::kCallUpgrade,
                                        "w-0 upgrading to 1.12.0 (0/5)");
}

// So does the reboot call's on the lifecycle path; the install and the drain before it name
// their step, since what a look says after them depends on how they went.
TEST(RolloutRecordTest, TheRebootCallsRecordSaysWhatTheLookAfterItSays) {
  RolloutWorld world = ReadyWorldMovedTo(FiveNodes("1.13.9", "1.34.1"), "1.14.2");
  const std::vector<RolloutDecision> decided = DecisionsThrough(world, ActionKind::kRebootNode);
  ExpectTheWaitAfterSaysWhatTheCallSaid(decided, ActionKind::kRebootNode,
                                        "w-0 rebooting into 1.14.2 (0/5)");
  const RolloutDecision* install = FindDecision(decided, ActionKind::kInstallImage);
  const RolloutDecision* drain = FindDecision(decided, ActionKind::kDrainNode);
  ASSERT_NE(install, nullptr);
  ASSERT_NE(drain, nullptr);
  EXPECT_EQ(install->message, "upgrading w-0 (0/5): install-image");
  EXPECT_EQ(drain->message, "upgrading w-0 (0/5): drain-node");
}

// Only a result whose loss repeats a harmless step waits; anything a restart resumes a node
// from is pushed before the next call.
TEST(RolloutRecordTest, OnlyRepeatableStepsWaitForTheNextRecord) {
  const std::vector<std::pair<ActionKind, bool>> cases = {
      {ActionKind::kNone, false},          {ActionKind::kPrePullImage, true},
      {ActionKind::kSnapshotEtcd, true},   {ActionKind::kStartNode, false},
      {ActionKind::kCallUpgrade, false},   {ActionKind::kInstallImage, false},
      {ActionKind::kDrainNode, false},     {ActionKind::kRebootNode, false},
      {ActionKind::kCompleteNode, true},   {ActionKind::kRollbackNode, false},
      {ActionKind::kFailNode, false},      {ActionKind::kStartKubernetesUpgrade, false}};
  for (const auto& [kind, waits] : cases) {
    EXPECT_EQ(RecordMayWaitForNext(kind), waits) << ActionKindName(kind);
  }
}

}  // namespace
}  // namespace tr::core
