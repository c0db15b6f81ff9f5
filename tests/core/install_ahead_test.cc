// policy.install: ahead, decided on a RolloutWorld whose window opens at a set time: what is
// installed before the window, what the window does, and what becomes of a pending install when
// the node reboots by itself or the target changes.
#include "core/install_ahead.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "core/plan_outlook.h"
#include "core/planner.h"
#include "core/status_decode.h"
#include "core/status_yaml.h"
#include "tests/support/rollout_world.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::chrono::hours kWindowIn{5};

struct AheadWorld {
  RolloutWorld world;
  RolloutMemory mem;
  TimePoint opens;
  ReleaseCatalog catalog = ReleaseCatalog::BuiltIn();

  AheadWorld(const std::string& from, const std::string& to)
      : world(MakeProfile(FiveNodes(from, "1.34.1"), to, "1.34.1"),
              MakeObserved(FiveNodes(from, "1.34.1"))) {
    world.profile().policy.install = InstallTiming::kAhead;
    world.profile().policy.settle = std::chrono::seconds(30);
    // The start checks ask the window only when one is set; whether it is open is Decide's.
    world.profile().policy.windows = {
        MaintenanceWindow{{0}, std::chrono::minutes(120), std::chrono::hours(4), "UTC"}};
    opens = world.now() + kWindowIn;
    for (NodeObservation& n : world.observed().nodes) n.boot_id = "boot-" + n.name;
  }

  RolloutDecision Decide() {
    const ClusterPlan plan =
        PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(), catalog);
    const WindowState window{world.now() >= opens, opens};
    return DecideNextAction({world.profile(), plan, world.observed(), mem, window, {}, world.now()});
  }

  // Decides, acts and records until the cluster rests or waits past `until`; the last decision.
  RolloutDecision Run(TimePoint until) {
    for (int i = 0; i < 500; ++i) {
      RolloutDecision d = Decide();
      if (d.kind == ActionKind::kNone) {
        if (!d.wait_until || *d.wait_until > until) return d;
        world.AdvanceTo(*d.wait_until);
        continue;
      }
      world.Apply(d);
      Record(d, mem, world.profile().policy, world.now());
    }
    ADD_FAILURE() << "did not rest";
    return {};
  }

  std::vector<std::string> Log(std::string_view prefix) {
    std::vector<std::string> out;
    for (const std::string& line : world.log()) {
      if (line.starts_with(prefix)) out.push_back(line);
    }
    return out;
  }
};

TEST(InstallAheadTest, EveryNodeIsInstalledBeforeTheWindowAndOnlyRebootedInIt) {
  AheadWorld a("1.13.9", "1.14.2");
  const RolloutDecision before = a.Run(a.opens - std::chrono::seconds(1));
  EXPECT_EQ(before.phase, ClusterPhase::kWaitingForWindow);
  EXPECT_THAT(before.message, HasSubstr("5 nodes installed, pending reboot: w-0, w-1, cp-0, cp-2, cp-1"));
  EXPECT_THAT(a.world.log(), ElementsAre("install w-0", "install w-1", "install cp-0",
                                         "install cp-2", "install cp-1"));
  // The install pulled each installer: nothing was pre-pulled besides.
  EXPECT_TRUE(a.world.pulled().empty());
  ASSERT_EQ(a.mem.staged.size(), 5u);
  EXPECT_EQ(a.mem.staged[0].image, "factory.talos.dev/metal-installer/abc:v1.14.2");

  a.world.AdvanceTo(a.opens);
  const RolloutDecision after = a.Run(a.opens + std::chrono::hours(2));
  EXPECT_EQ(after.phase, ClusterPhase::kReady) << after.message;
  EXPECT_THAT(a.Log("reboot"), ElementsAre("reboot w-0", "reboot w-1", "reboot cp-0",
                                           "reboot cp-2", "reboot cp-1"));
  EXPECT_EQ(a.Log("install").size(), 5u) << "nothing is installed in the window";
  EXPECT_TRUE(a.mem.staged.empty());
  for (const auto& [node, count] : a.world.reboots_into_upgrade()) EXPECT_EQ(count, 1) << node;
}

TEST(InstallAheadTest, APendingNodeThatRebootsByItselfIsActivatedEarlyAndNoOtherReboots) {
  AheadWorld a("1.13.9", "1.14.2");
  a.Run(a.opens - std::chrono::hours(2));
  a.world.PowerCycle("w-1");
  a.world.AdvanceTo(a.world.now() + a.world.reboot_time);
  const RolloutDecision d = a.Decide();
  ASSERT_EQ(d.kind, ActionKind::kActivatedEarly) << d.message;
  EXPECT_EQ(d.node, "w-1");
  EXPECT_THAT(d.message, HasSubstr("w-1 activated early"));
  a.world.Apply(d);
  Record(d, a.mem, a.world.profile().policy, a.world.now());

  const RolloutDecision waiting = a.Run(a.opens - std::chrono::seconds(1));
  EXPECT_EQ(waiting.phase, ClusterPhase::kWaitingForWindow) << waiting.message;
  EXPECT_THAT(waiting.message, HasSubstr("4 nodes installed, pending reboot: w-0, cp-0, cp-2, cp-1"));
  EXPECT_TRUE(a.Log("reboot").empty()) << "no node rebooted because of it";

  a.world.AdvanceTo(a.opens);
  EXPECT_EQ(a.Run(a.opens + std::chrono::hours(2)).phase, ClusterPhase::kReady);
  EXPECT_THAT(a.Log("reboot"),
              ElementsAre("reboot w-0", "reboot cp-0", "reboot cp-2", "reboot cp-1"));
}

TEST(InstallAheadTest, AnActivatedNodeCountsOnlyOnceHealthy) {
  AheadWorld a("1.13.9", "1.14.2");
  a.Run(a.opens - std::chrono::hours(2));
  a.world.never_ready["cp-0"] = true;
  a.world.PowerCycle("cp-0");
  a.world.AdvanceTo(a.world.now() + a.world.reboot_time);
  const RolloutDecision d = a.Decide();
  EXPECT_EQ(d.kind, ActionKind::kNone);
  EXPECT_EQ(d.phase, ClusterPhase::kUpgradingTalos) << "never a failure";
  EXPECT_THAT(d.message, HasSubstr("cp-0 rebooted outside the window into its pending Talos 1.14.2"));
}

TEST(InstallAheadTest, AnInstallLostInARebootIsMadeAgain) {
  AheadWorld a("1.13.9", "1.14.2");
  a.Run(a.opens - std::chrono::hours(2));
  a.world.fail_boot["w-0"] = true;  // the install is gone: it boots its old version again
  a.world.PowerCycle("w-0");
  a.world.AdvanceTo(a.world.now() + a.world.reboot_time);
  const RolloutDecision d = a.Decide();
  ASSERT_EQ(d.kind, ActionKind::kInstallAhead) << d.message;
  EXPECT_EQ(d.node, "w-0");
  EXPECT_THAT(d.message, HasSubstr("its pending install of 1.14.2 was lost; installing it again"));
  a.world.fail_boot["w-0"] = false;
  a.world.Apply(d);
  Record(d, a.mem, a.world.profile().policy, a.world.now());
  EXPECT_EQ(a.world.installs().at("w-0"), 2);
  a.world.AdvanceTo(a.opens);
  EXPECT_EQ(a.Run(a.opens + std::chrono::hours(2)).phase, ClusterPhase::kReady);
}

TEST(InstallAheadTest, ADesiredVersionBackToTheRunningOneUnstagesEveryPendingNode) {
  AheadWorld a("1.13.9", "1.14.2");
  a.Run(a.opens - std::chrono::hours(2));
  a.world.profile().talos_version = V("1.13.9");
  // Withdrawn first, so that a restart before the un-stage is recorded never reboots into it.
  const RolloutDecision withdraw = a.Decide();
  ASSERT_EQ(withdraw.kind, ActionKind::kWithdrawStaged) << withdraw.message;
  Record(withdraw, a.mem, a.world.profile().policy, a.world.now());
  const RolloutDecision d = a.Decide();
  ASSERT_EQ(d.kind, ActionKind::kUnstageNode) << d.message;
  EXPECT_EQ(d.node, withdraw.node);
  EXPECT_EQ(d.image, "factory.talos.dev/metal-installer/abc:v1.13.9");
  a.world.Apply(d);  // its record lost: the next look un-stages again, and reboots nothing
  const RolloutDecision again = a.Decide();
  EXPECT_EQ(again.kind, ActionKind::kUnstageNode) << again.message;
  EXPECT_EQ(again.node, d.node);
  const RolloutDecision rest = a.Run(a.opens - std::chrono::seconds(1));
  EXPECT_EQ(rest.phase, ClusterPhase::kReady) << rest.message;
  EXPECT_EQ(a.Log("unstage").size(), 6u) << "each node once, and the one whose record was lost twice";
  EXPECT_TRUE(a.mem.staged.empty());
  EXPECT_TRUE(a.Log("reboot").empty());
}

TEST(InstallAheadTest, AReleaseMarkedBrokenBeforeTheWindowIsUnstagedAndNeverBooted) {
  AheadWorld a("1.13.9", "1.14.2");
  a.Run(a.opens - std::chrono::hours(2));
  a.catalog.MarkTalosBroken(V("1.14.2"));
  const RolloutDecision d = a.Decide();
  ASSERT_EQ(d.kind, ActionKind::kWithdrawStaged) << d.message;
  EXPECT_THAT(d.message, HasSubstr("Talos 1.14.2 is marked broken"));
  a.Run(a.opens - std::chrono::seconds(1));
  a.world.AdvanceTo(a.opens);
  const RolloutDecision rest = a.Run(a.opens + std::chrono::hours(2));
  EXPECT_EQ(rest.phase, ClusterPhase::kBlocked) << rest.message;
  EXPECT_THAT(rest.message, HasSubstr("1.14.2"));
  EXPECT_EQ(a.Log("unstage").size(), 5u);
  EXPECT_TRUE(a.Log("reboot").empty()) << "no node rebooted into the broken release";
  for (const NodeObservation& n : a.world.observed().nodes) EXPECT_EQ(*n.talos, V("1.13.9"));
}

TEST(InstallAheadTest, ANewTargetIsInstalledOverThePendingOne) {
  AheadWorld a("1.13.9", "1.14.2");
  a.Run(a.opens - std::chrono::hours(2));
  a.world.profile().talos_version = V("1.14.3");
  const RolloutDecision d = a.Decide();
  ASSERT_EQ(d.kind, ActionKind::kInstallAhead) << d.message;
  EXPECT_THAT(d.message, HasSubstr("over its pending Talos 1.14.2"));
  a.Run(a.opens - std::chrono::seconds(1));
  a.world.AdvanceTo(a.opens);
  EXPECT_EQ(a.Run(a.opens + std::chrono::hours(2)).phase, ClusterPhase::kReady);
  for (const NodeObservation& n : a.world.observed().nodes) EXPECT_EQ(*n.talos, V("1.14.3"));
  for (const auto& [node, count] : a.world.installs()) EXPECT_EQ(count, 2) << node;
}

TEST(InstallAheadTest, BelowTalos113TheWindowDoesItAllAsBefore) {
  AheadWorld a("1.11.6", "1.12.0");
  const RolloutDecision before = a.Run(a.opens - std::chrono::seconds(1));
  EXPECT_EQ(before.phase, ClusterPhase::kWaitingForWindow);
  EXPECT_TRUE(a.world.log().empty());
  a.world.AdvanceTo(a.opens);
  EXPECT_EQ(a.Run(a.opens + std::chrono::hours(2)).phase, ClusterPhase::kReady);
  EXPECT_EQ(a.Log("upgrade").size(), 5u);
  EXPECT_TRUE(a.Log("install").empty());
}

TEST(InstallAheadTest, PendingInstallsTheStatusLostAreRecalledFromTheNodesMarks) {
  AheadWorld a("1.13.9", "1.14.2");
  a.Run(a.opens - std::chrono::hours(2));
  const std::vector<StagedInstall> remembered = a.mem.staged;
  for (const StagedInstall& s : remembered) {
    for (NodeObservation& n : a.world.observed().nodes) {
      if (n.name == s.node) n.pending_mark = PendingInstallMark{s.target, s.schematic, s.boot_id};
    }
  }
  a.mem.staged.clear();  // a restart from a status written before the installs
  const RolloutDecision d = a.Decide();
  ASSERT_EQ(d.kind, ActionKind::kRecallStaged) << d.message;
  EXPECT_THAT(d.message, HasSubstr("'s pending install of Talos 1.14.2 in its Kubernetes node's "
                                   "talos-reconciler.dev/pending-install annotation"));
  const RolloutDecision rest = a.Run(a.opens - std::chrono::seconds(1));
  EXPECT_EQ(rest.phase, ClusterPhase::kWaitingForWindow) << rest.message;
  EXPECT_EQ(a.Log("install").size(), 5u) << "nothing is installed twice";
  // The same installs, read back in the nodes' order rather than the installs'.
  auto by_node = [](std::vector<StagedInstall> v) {
    for (StagedInstall& s : v) s.installed = {};
    std::sort(v.begin(), v.end(),
              [](const StagedInstall& x, const StagedInstall& y) { return x.node < y.node; });
    return v;
  };
  EXPECT_EQ(by_node(a.mem.staged), by_node(remembered));
}

TEST(InstallAheadTest, AMarkOfAnEarlierBootIsClearedOrCountsTheNodeActivated) {
  AheadWorld a("1.13.9", "1.14.2");
  NodeObservation& w0 = a.world.observed().nodes[0];
  w0.pending_mark = PendingInstallMark{V("1.14.2"), "", "an-earlier-boot"};
  RolloutDecision d = a.Decide();
  EXPECT_EQ(d.kind, ActionKind::kUnstageNode) << d.message;
  EXPECT_EQ(d.image, "") << "only the mark goes: the node holds nothing";
  w0.talos = V("1.14.2");
  d = a.Decide();
  EXPECT_EQ(d.kind, ActionKind::kActivatedEarly) << d.message;
}

TEST(InstallAheadTest, ABlockedPlanForAnotherReasonKeepsThePendingInstalls) {
  AheadWorld a("1.13.9", "1.14.2");
  a.Run(a.opens - std::chrono::hours(2));
  a.world.observed().nodes[1].reachable = false;  // as while a node reboots in the window
  const RolloutDecision d = a.Decide();
  EXPECT_NE(d.kind, ActionKind::kWithdrawStaged) << d.message;
  EXPECT_NE(d.kind, ActionKind::kUnstageNode) << d.message;
  EXPECT_EQ(a.mem.staged.size(), 5u);
}

// `plan --status` (and a pull request's plan) read the memory from the status: the pending nodes
// and the window are named where the plan says what comes next.
TEST(InstallAheadTest, APlanWithTheStatusNamesThePendingNodesAndTheWindow) {
  AheadWorld a("1.13.9", "1.14.2");
  a.Run(a.opens - std::chrono::hours(2));
  const ClusterPlan plan =
      PlanCluster(a.world.profile(), a.world.observed(), SupportMatrix::BuiltIn(), a.catalog);
  const PlanOutlook outlook = OutlookOf({.profile = a.world.profile(),
                                         .plan = plan,
                                         .observed = a.world.observed(),
                                         .memory = a.mem,
                                         .window = {false, a.opens},
                                         .gates = {},
                                         .promotion = std::nullopt,
                                         .kubernetes_upgrades = true,
                                         .kubernetes_step_started = false,
                                         .now = a.world.now()});
  EXPECT_EQ(outlook.phase, ClusterPhase::kWaitingForWindow);
  EXPECT_THAT(outlook.next, HasSubstr("(opens " + FormatTimestamp(a.opens) + "); 5 nodes installed, "
                                      "pending reboot: w-0, w-1, cp-0, cp-2, cp-1"));
  ASSERT_FALSE(outlook.steps.empty());
  EXPECT_EQ(outlook.steps.front().run, StepRun::kWaits);
  // The plan's gates say what ahead does.
  EXPECT_THAT(plan.gates, ::testing::Contains(HasSubstr("install: ahead: a Talos step from 1.13")));
}

TEST(InstallAheadTest, PendingInstallsSurviveTheStatusFile) {
  AheadWorld a("1.13.9", "1.14.2");
  a.Run(a.opens - std::chrono::hours(2));
  ClusterStatus status;
  status.cluster = "c";
  status.rollout = a.mem;
  status.rollout.staged[1].withdrawn = true;
  const std::string yaml = RenderStatusYaml(status);
  EXPECT_THAT(yaml, HasSubstr("staged:"));
  Decoded<ClusterStatus> back = DecodeClusterStatus("status/c.yaml", yaml);
  ASSERT_TRUE(back.ok()) << back.diagnostics.front().ToString();
  EXPECT_EQ(back.value->rollout.staged, status.rollout.staged);
  EXPECT_FALSE(StatusChanged(*back.value, status));
}

}  // namespace
}  // namespace tr::core
