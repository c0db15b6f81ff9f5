// Where a restarted reconciler finds a node whose operation it recorded, and what it does
// next: one row per situation a kill can leave behind (the record of a step lost, a step half
// done on the node), on both upgrade paths. Nothing a node already did is asked again in a
// way that fails or reboots it twice.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "core/planner.h"
#include "core/rollout.h"
#include "tests/support/fleet_fixtures.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;
using ::testing::HasSubstr;

using Look = std::function<void(NodeObservation&)>;

void Untouched(NodeObservation&) {}
void Rebooting(NodeObservation& n) {
  n.stage = MachineStage::kRebooting;
  n.ready = false;
}
void Upgrading(NodeObservation& n) {
  n.stage = MachineStage::kUpgrading;
  n.ready = false;
  n.schedulable = false;
}
void Down(NodeObservation& n) {
  n.reachable = false;
  n.talos.reset();
  n.ready = false;
  n.boot_id.clear();
}
Look BackOn(const char* version, bool ready, bool schedulable) {
  return [=](NodeObservation& n) {
    n.talos = V(version);
    n.boot_id = "boot-w-0-new";
    n.stage = ready ? MachineStage::kRunning : MachineStage::kBooting;
    n.ready = ready;
    n.schedulable = schedulable;
  };
}

struct ResumeCase {
  const char* situation;
  bool lifecycle;
  OperationPhase recorded;
  Look look;
  ActionKind next;
  const char* message;  // part of the decision's message
};

RolloutDecision Resume(const ResumeCase& c) {
  const std::string from = c.lifecycle ? "1.13.9" : "1.11.6";
  const std::string to = c.lifecycle ? "1.14.2" : "1.12.0";
  const auto nodes = FiveNodes(from, "1.34.1");
  ClusterProfile profile = MakeProfile(nodes, to, "1.34.1");
  ObservedCluster observed = MakeObserved(nodes);
  for (NodeObservation& n : observed.nodes) {
    if (n.name == "w-0") c.look(n);
  }
  const TimePoint now = TimePoint{} + std::chrono::hours(1000);
  RolloutMemory mem;
  mem.prepulled_image = profile.talos_image + ":v" + to;
  OperationInFlight op;
  op.node = "w-0";
  op.target = V(to);
  op.image = mem.prepulled_image;
  op.lifecycle = c.lifecycle;
  op.boot_id_before = "boot-w-0";
  op.phase = c.recorded;
  op.started = now - std::chrono::minutes(1);
  op.deadline = now + std::chrono::minutes(30);
  mem.in_flight.push_back(op);
  const ClusterPlan plan =
      PlanCluster(profile, observed, SupportMatrix::BuiltIn(), ReleaseCatalog::BuiltIn());
  return DecideNextAction({profile, plan, observed, mem, {}, {}, now});
}

TEST(RolloutResumeTest, EverySituationAKillLeavesResumesWithoutRepeatingAStep) {
  using enum OperationPhase;
  using enum ActionKind;
  const std::vector<ResumeCase> cases = {
      // Lifecycle (1.13+): install, drain, reboot.
      {"install not started, or running (Talos shows nothing of it; asking again is answered "
       "'already in progress')",
       true, kRecorded, Untouched, kInstallImage, "install-image"},
      {"install, drain and reboot done, records lost: rebooting", true, kRecorded, Rebooting,
       kNone, "w-0 rebooting into 1.14.2"},
      {"every record lost, node back on the target", true, kRecorded,
       BackOn("1.14.2", true, false), kCompleteNode, "healthy on Talos 1.14.2"},
      {"installed; drain not started or cut short", true, kInstalled, Untouched, kDrainNode,
       "drain-node"},
      {"drained; reboot not sent", true, kDrained, Untouched, kRebootNode,
       "w-0 rebooting into 1.14.2"},
      {"drained; reboot sent, record lost: down", true, kDrained, Down, kNone,
       "w-0 rebooting into 1.14.2"},
      {"drained; reboot sent, record lost: back on the target", true, kDrained,
       BackOn("1.14.2", true, false), kCompleteNode, "healthy on Talos 1.14.2"},
      {"drained; reboot sent, record lost: fell back to the old slot", true, kDrained,
       BackOn("1.13.9", true, false), kFailNode, "fell back to its previous slot"},
      {"reboot sent: booting the new version", true, kRebootCalled,
       BackOn("1.14.2", false, false), kNone, "w-0 back on 1.14.2, waiting"},
      // Legacy (below 1.13): one Upgrade call; the node drains and reboots itself.
      {"upgrade not called", false, kRecorded, Untouched, kCallUpgrade, "w-0 upgrading to 1.12.0"},
      {"upgrade called, record lost: upgrading", false, kRecorded, Upgrading, kNone,
       "w-0 upgrading to 1.12.0"},
      {"upgrade called: down", false, kUpgradeCalled, Down, kNone, "w-0 rebooting into 1.12.0"},
      {"upgrade called: fell back", false, kUpgradeCalled, BackOn("1.11.6", true, true),
       kFailNode, "fell back to its previous slot"},
      {"upgrade called: back on the target", false, kUpgradeCalled, BackOn("1.12.0", true, true),
       kCompleteNode, "healthy on Talos 1.12.0"},
  };
  for (const ResumeCase& c : cases) {
    SCOPED_TRACE(c.situation);
    const RolloutDecision d = Resume(c);
    EXPECT_EQ(ActionKindName(d.kind), std::string(ActionKindName(c.next))) << d.message;
    EXPECT_THAT(d.message, HasSubstr(c.message));
    if (d.kind != ActionKind::kNone && d.kind != ActionKind::kFailNode) {
      EXPECT_EQ(d.node, "w-0");
    }
  }
}

// The executor takes the look's word for a node it saw schedulable (no second node list).
TEST(RolloutResumeTest, ACompletionSaysWhetherItsLookSawTheNodeCordoned) {
  for (const bool schedulable : {true, false}) {
    // The lifecycle path cordons the node; a legacy one waits for Talos to uncordon it.
    const ResumeCase back{"back on the target", true, OperationPhase::kRebootCalled,
                          BackOn("1.14.2", true, schedulable), ActionKind::kCompleteNode, ""};
    const RolloutDecision d = Resume(back);
    ASSERT_EQ(d.kind, ActionKind::kCompleteNode) << d.message;
    EXPECT_EQ(d.seen_cordoned, !schedulable);
  }
}

TEST(RolloutResumeTest, AnUpgradedControlPlaneRebootingIsNotReportedAsAQuorumWait) {
  const auto nodes = FiveNodes("1.11.6", "1.34.1");
  ClusterProfile profile = MakeProfile(nodes, "1.12.0", "1.34.1");
  ObservedCluster observed = MakeObserved(nodes);
  for (NodeObservation& n : observed.nodes) {
    if (n.name == "w-0" || n.name == "w-1") n.talos = V("1.12.0");
    if (n.name == "cp-0") {
      Rebooting(n);
      n.etcd_member = false;  // its etcd stopped with it
    }
  }
  const TimePoint now = TimePoint{} + std::chrono::hours(1000);
  RolloutMemory mem;
  mem.prepulled_image = mem.etcd_snapshot_image = profile.talos_image + ":v1.12.0";
  OperationInFlight op{"cp-0", V("1.12.0"), mem.prepulled_image, false, "boot-cp-0", "actor",
                       OperationPhase::kUpgradeCalled, now, now + std::chrono::minutes(30)};
  mem.in_flight.push_back(op);
  const ClusterPlan plan =
      PlanCluster(profile, observed, SupportMatrix::BuiltIn(), ReleaseCatalog::BuiltIn());
  const RolloutDecision d = DecideNextAction({profile, plan, observed, mem, {}, {}, now});
  EXPECT_EQ(d.kind, ActionKind::kNone);
  EXPECT_EQ(d.phase, ClusterPhase::kUpgradingTalos);
  EXPECT_EQ(d.message, "cp-0 rebooting into 1.12.0 (2/5)");
}

}  // namespace
}  // namespace tr::core
