#include "core/rollout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "core/planner.h"
#include "core/rollout_outcomes.h"
#include "core/rollout_record.h"
#include "core/timestamp.h"
#include "tests/support/rollout_world.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;
using ::testing::HasSubstr;
using ::testing::Not;

struct RunResult {
  RolloutDecision last;
  int decisions = 0;
};

// Drives decide -> act -> record until the rollout rests or `max_steps` decisions. With a
// crash probability, a recorded change is sometimes lost, as when the process dies between
// acting and writing the status branch (kStartNode is written before anything is called).
RunResult RunRollout(RolloutWorld& world, RolloutMemory& mem, double crash_probability = 0,
                     unsigned seed = 1, int max_steps = 2000) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution crash(crash_probability);
  RunResult result;
  for (; result.decisions < max_steps; ++result.decisions) {
    ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                   ReleaseCatalog::BuiltIn());
    RolloutInput in{world.profile(), plan, world.observed(), mem, {}, {}, world.now()};
    RolloutDecision d = DecideNextAction(in);
    result.last = d;
    if (d.kind == ActionKind::kNone) {
      const bool rests = d.phase == ClusterPhase::kReady || d.phase == ClusterPhase::kBlocked ||
                         d.phase == ClusterPhase::kUpgradeFailed ||
                         d.phase == ClusterPhase::kPaused;
      if (rests || !d.wait_until) return result;
      world.AdvanceTo(*d.wait_until);
      continue;
    }
    world.Apply(d);
    if (d.kind != ActionKind::kStartNode && crash(rng)) continue;  // lost the record
    Record(d, mem, world.profile().policy, world.now());
  }
  ADD_FAILURE() << "rollout did not rest after " << max_steps << " decisions";
  return result;
}

RolloutWorld FiveNodeWorld(std::string from, std::string to) {
  auto nodes = FiveNodes(from, "1.34.1");
  RolloutWorld world(MakeProfile(nodes, to, "1.34.1"), MakeObserved(nodes));
  world.profile().policy.settle = std::chrono::seconds(30);
  return world;
}

TEST(RolloutTest, LegacyRolloutUpgradesEveryNodeOnceInPlanOrder) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  RolloutMemory mem;
  RunResult r = RunRollout(world, mem);
  EXPECT_EQ(r.last.phase, ClusterPhase::kReady) << r.last.message;
  EXPECT_EQ(world.log(), (std::vector<std::string>{"upgrade w-0", "upgrade w-1", "upgrade cp-0",
                                                   "upgrade cp-2", "upgrade cp-1"}));
  for (const auto& [node, count] : world.reboots_into_upgrade()) EXPECT_EQ(count, 1) << node;
  // Below 1.13 each node's Upgrade call pulls the image itself: nothing was pre-pulled, and
  // no pre-pull was recorded as done.
  EXPECT_EQ(mem.prepulled_image, "");
  EXPECT_EQ(mem.etcd_snapshot_image, "factory.talos.dev/metal-installer/abc:v1.12.0");
}

RolloutDecision FirstDecision(RolloutWorld& world) {
  ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                 ReleaseCatalog::BuiltIn());
  RolloutMemory mem;
  return DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
}

// Carries out decision `d`: waits until its time or acts and records; false once the rollout
// rests.
bool Carry(RolloutWorld& world, RolloutMemory& mem, const RolloutDecision& d) {
  if (d.kind == ActionKind::kNone && !d.wait_until) return false;
  if (d.kind == ActionKind::kNone) {
    world.AdvanceTo(*d.wait_until);
    return true;
  }
  world.Apply(d);
  Record(d, mem, world.profile().policy, world.now());
  return true;
}

// The look left etcd out, as the reconciler's is when DecisionReadsEtcd says no.
ObservedCluster WithoutEtcd(ObservedCluster observed) {
  for (NodeObservation& node : observed.nodes) {
    node.etcd_member = node.etcd_healthy = node.etcd_leader = false;
  }
  observed.etcd_observed = false;
  return observed;
}

// Wherever DecisionReadsEtcd says no, along a whole rollout and after it, the decision is the
// same with or without etcd; it says yes until the cluster is up to date.
TEST(RolloutTest, ADecisionThatReadsNoEtcdIsTheSameWithoutIt) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  RolloutMemory mem;
  int without = 0;
  int with = 0;
  for (int i = 0; i < 2000; ++i) {
    const ClusterPlan plan = PlanCluster(world.profile(), world.observed(),
                                         SupportMatrix::BuiltIn(), ReleaseCatalog::BuiltIn());
    const RolloutDecision d =
        DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
    if (DecisionReadsEtcd(plan, mem)) {
      ++with;
    } else {
      ++without;
      const ObservedCluster blind = WithoutEtcd(world.observed());
      const ClusterPlan blind_plan = PlanCluster(world.profile(), blind, SupportMatrix::BuiltIn(),
                                                 ReleaseCatalog::BuiltIn());
      EXPECT_EQ(blind_plan.status, plan.status);
      const RolloutDecision b =
          DecideNextAction({world.profile(), blind_plan, blind, mem, {}, {}, world.now()});
      EXPECT_EQ(b.kind, d.kind) << d.message;
      EXPECT_EQ(b.phase, d.phase) << d.message;
      EXPECT_EQ(b.message, d.message);
    }
    if (!Carry(world, mem, d)) break;
  }
  EXPECT_EQ(world.log().size(), 5u);
  EXPECT_GT(with, 10);
  EXPECT_EQ(without, 1);  // the last decision: Ready

  // An unhealthy member of a cluster with nothing to do changes nothing that is decided.
  world.observed().FindNode("cp-0")->etcd_healthy = false;
  const ClusterPlan done = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                       ReleaseCatalog::BuiltIn());
  EXPECT_FALSE(DecisionReadsEtcd(done, mem));
  // Anything in flight or installed ahead is read with etcd.
  RolloutMemory busy = mem;
  busy.in_flight.push_back(OperationInFlight{});
  EXPECT_TRUE(DecisionReadsEtcd(done, busy));
  busy = mem;
  busy.staged.push_back(StagedInstall{});
  EXPECT_TRUE(DecisionReadsEtcd(done, busy));
}

TEST(RolloutTest, OnlyAStepFrom113StartsWithAPrePullOfEveryNode) {
  RolloutWorld legacy = FiveNodeWorld("1.11.6", "1.12.0");
  const RolloutDecision first_legacy = FirstDecision(legacy);
  EXPECT_EQ(first_legacy.kind, ActionKind::kStartNode) << first_legacy.message;
  EXPECT_EQ(first_legacy.node, "w-0");

  RolloutWorld lifecycle = FiveNodeWorld("1.13.9", "1.14.2");
  lifecycle.profile().kubernetes_version = V("1.34.1");
  const RolloutDecision first = FirstDecision(lifecycle);
  ASSERT_EQ(first.kind, ActionKind::kPrePullImage) << first.message;
  EXPECT_EQ(first.nodes, (std::vector<std::string>{"w-0", "w-1", "cp-0", "cp-2", "cp-1"}));
}

TEST(RolloutTest, LifecycleRolloutDrainsAndReboots) {
  RolloutWorld world = FiveNodeWorld("1.13.9", "1.14.2");
  world.profile().kubernetes_version = V("1.34.1");
  RolloutMemory mem;
  RunResult r = RunRollout(world, mem);
  EXPECT_EQ(r.last.phase, ClusterPhase::kReady) << r.last.message;
  EXPECT_EQ(world.log().size(), 5u);
  EXPECT_EQ(world.log().front(), "reboot w-0");
  for (const NodeObservation& n : world.observed().nodes) {
    EXPECT_EQ(*n.talos, V("1.14.2"));
    EXPECT_TRUE(n.schedulable) << n.name << " left cordoned";
  }
}

TEST(RolloutTest, LostRecordsNeverUpgradeANodeTwice) {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    for (const char* from : {"1.11.6", "1.13.9"}) {
      RolloutWorld world = FiveNodeWorld(from, std::string(from) == "1.11.6" ? "1.12.0" : "1.14.2");
      RolloutMemory mem;
      RunResult r = RunRollout(world, mem, 0.3, seed);
      ASSERT_EQ(r.last.phase, ClusterPhase::kReady) << "seed " << seed << ": " << r.last.message;
      for (const auto& [node, count] : world.reboots_into_upgrade()) {
        ASSERT_EQ(count, 1) << node << " upgraded " << count << " times, seed " << seed;
      }
      ASSERT_EQ(world.reboots_into_upgrade().size(), 5u);
    }
  }
}

// A profile whose schematic changed at the version the nodes run: every node is reinstalled
// once at that version with the new installer, and then the cluster is Ready.
const std::string kOldSchematic(64, 'a');
const std::string kNewSchematic(64, 'b');

RolloutWorld SchematicChangeWorld() {
  RolloutWorld world = FiveNodeWorld("1.14.2", "1.14.2");
  ClusterProfile& profile = world.profile();
  profile.talos_factory = FactoryInstaller{};
  profile.talos_image = "127.0.0.1:5000/metal-installer/" + kNewSchematic;
  profile.talos_schematic_id = kNewSchematic;
  for (NodeObservation& n : world.observed().nodes) n.schematic = kOldSchematic;
  return world;
}

TEST(RolloutTest, ASchematicChangeReinstallsEveryNodeOnceAtTheSameVersion) {
  for (unsigned seed = 1; seed <= 30; ++seed) {
    RolloutWorld world = SchematicChangeWorld();
    RolloutMemory mem;
    RunResult r = RunRollout(world, mem, seed == 1 ? 0 : 0.3, seed);
    ASSERT_EQ(r.last.phase, ClusterPhase::kReady) << "seed " << seed << ": " << r.last.message;
    ASSERT_EQ(world.reboots_into_upgrade().size(), 5u) << "seed " << seed;
    for (const auto& [node, count] : world.reboots_into_upgrade()) {
      ASSERT_EQ(count, 1) << node << " reinstalled " << count << " times, seed " << seed;
    }
    for (const NodeObservation& n : world.observed().nodes) {
      EXPECT_EQ(*n.talos, V("1.14.2"));
      EXPECT_EQ(n.schematic, kNewSchematic) << n.name;
    }
    if (seed == 1) {
      EXPECT_EQ(world.log(), (std::vector<std::string>{"reboot w-0", "reboot w-1", "reboot cp-0",
                                                       "reboot cp-2", "reboot cp-1"}));
      // Once Ready, nothing more is done.
      const size_t calls = world.log().size();
      RunResult again = RunRollout(world, mem);
      EXPECT_EQ(again.last.phase, ClusterPhase::kReady);
      EXPECT_EQ(world.log().size(), calls);
    }
  }
}

TEST(RolloutTest, ANodeBackOnItsOldSchematicFails) {
  RolloutWorld world = SchematicChangeWorld();
  world.fail_boot["w-0"] = true;
  RolloutMemory mem;
  RunResult r = RunRollout(world, mem);
  EXPECT_EQ(r.last.phase, ClusterPhase::kUpgradeFailed);
  EXPECT_THAT(r.last.message, HasSubstr("node w-0 came back on Talos 1.14.2 with schematic " +
                                        kOldSchematic + " instead of 1.14.2 with schematic " +
                                        kNewSchematic));
  EXPECT_EQ(world.log(), (std::vector<std::string>{"reboot w-0"}));
  // The failure halts this schematic at this version; another schematic starts afresh.
  EXPECT_TRUE(HaltedByFailure(mem, V("1.14.2"), kNewSchematic, ""));
  EXPECT_FALSE(HaltedByFailure(mem, V("1.14.2"), std::string(64, 'c'), ""));
}

// w-1, a GPU worker, has a schematic of its own (spec.nodes[].schematic); every node runs
// kOldSchematic on `from`.
const std::string kGpuSchematic(64, 'd');

RolloutWorld PerNodeSchematicWorld(std::string from) {
  RolloutWorld world = SchematicChangeWorld();
  world.profile().kubernetes_version = V("1.34.1");
  NodeSpec& gpu = world.profile().nodes[4];
  EXPECT_EQ(gpu.name, "w-1");
  gpu.schematic = Schematic{};
  gpu.talos_image = "127.0.0.1:5000/metal-installer/" + kGpuSchematic;
  gpu.talos_schematic_id = kGpuSchematic;
  for (NodeObservation& n : world.observed().nodes) n.talos = V(from);
  return world;
}

void ExpectEachOnItsOwnSchematicOnce(RolloutWorld& world, size_t moved, unsigned seed) {
  ASSERT_EQ(world.reboots_into_upgrade().size(), moved) << "seed " << seed;
  for (const auto& [node, count] : world.reboots_into_upgrade()) {
    ASSERT_EQ(count, 1) << node << " moved " << count << " times, seed " << seed;
  }
  for (const NodeObservation& n : world.observed().nodes) {
    EXPECT_EQ(*n.talos, V("1.14.2")) << n.name;
    EXPECT_EQ(n.schematic, n.name == "w-1" ? kGpuSchematic : kNewSchematic) << n.name;
  }
}

TEST(RolloutTest, PerNodeSchematicsUpgradeEachNodeOnceOntoItsOwn) {
  for (unsigned seed = 1; seed <= 30; ++seed) {
    RolloutWorld world = PerNodeSchematicWorld("1.13.9");
    RolloutMemory mem;
    RunResult r = RunRollout(world, mem, seed == 1 ? 0 : 0.3, seed);
    ASSERT_EQ(r.last.phase, ClusterPhase::kReady) << "seed " << seed << ": " << r.last.message;
    ExpectEachOnItsOwnSchematicOnce(world, 5, seed);
    // Each node pre-pulled the installer it then booted, and no other.
    for (const auto& [node, images] : world.pulled()) {
      const std::string& schematic = node == "w-1" ? kGpuSchematic : kNewSchematic;
      for (const std::string& image : images) {
        EXPECT_EQ(image, "127.0.0.1:5000/metal-installer/" + schematic + ":v1.14.2") << node;
      }
    }
    EXPECT_EQ(world.pulled().size(), 5u) << "seed " << seed;
  }
}

TEST(RolloutTest, OnlyANodeOffItsOwnSchematicIsReinstalled) {
  for (unsigned seed = 1; seed <= 30; ++seed) {
    RolloutWorld world = PerNodeSchematicWorld("1.14.2");
    for (NodeObservation& n : world.observed().nodes) n.schematic = kNewSchematic;
    RolloutMemory mem;
    RunResult r = RunRollout(world, mem, seed == 1 ? 0 : 0.3, seed);
    ASSERT_EQ(r.last.phase, ClusterPhase::kReady) << "seed " << seed << ": " << r.last.message;
    ExpectEachOnItsOwnSchematicOnce(world, 1, seed);
    EXPECT_EQ(world.log(), std::vector<std::string>{"reboot w-1"});
  }
}

TEST(RolloutTest, AFailureOnANodesOwnSchematicHalts) {
  RolloutWorld world = PerNodeSchematicWorld("1.14.2");
  for (NodeObservation& n : world.observed().nodes) n.schematic = kNewSchematic;
  world.fail_boot["w-1"] = true;
  RolloutMemory mem;
  RunResult r = RunRollout(world, mem);
  EXPECT_EQ(r.last.phase, ClusterPhase::kUpgradeFailed);
  EXPECT_THAT(r.last.message, HasSubstr("instead of 1.14.2 with schematic " + kGpuSchematic));
  EXPECT_TRUE(HaltedByFailure(mem, world.profile()));
  EXPECT_EQ(world.log(), std::vector<std::string>{"reboot w-1"});
}

TEST(RolloutTest, NodeThatNeverReturnsFailsAtItsDeadlineAndHalts) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  world.never_return["w-1"] = true;
  RolloutMemory mem;
  RunResult r = RunRollout(world, mem);
  EXPECT_EQ(r.last.phase, ClusterPhase::kUpgradeFailed);
  EXPECT_THAT(r.last.message,
              HasSubstr("node w-1 did not become healthy on Talos 1.12.0 within 30m"));
  EXPECT_THAT(r.last.message, Not(HasSubstr("is not Ready")));
  EXPECT_EQ(world.log(), (std::vector<std::string>{"upgrade w-0", "upgrade w-1"}));
}

// Talos keeps a node on the new version while it is not Ready (the A/B fallback stays armed
// and reverts only on a fatal boot error): the rollout waits for it until the node's deadline,
// then halts, and never upgrades it a second time.
TEST(RolloutTest, NodeOnTheNewVersionNeverReadyFailsAtItsDeadlineUpgradedOnce) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  world.never_ready["w-1"] = true;
  RolloutMemory mem;
  RunResult r = RunRollout(world, mem);
  EXPECT_EQ(r.last.phase, ClusterPhase::kUpgradeFailed);
  EXPECT_THAT(r.last.message,
              HasSubstr("node w-1 did not become healthy on Talos 1.12.0 within 30m: it runs "
                        "Talos 1.12.0 but is not Ready"));
  EXPECT_TRUE(HaltedByFailure(mem, world.profile()));
  EXPECT_EQ(world.log(), (std::vector<std::string>{"upgrade w-0", "upgrade w-1"}));
  EXPECT_EQ(world.reboots_into_upgrade().at("w-1"), 1);
}

TEST(RolloutTest, BootFailureIsDetectedAsTheOldVersion) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  world.fail_boot["w-0"] = true;
  RolloutMemory mem;
  RunResult r = RunRollout(world, mem);
  EXPECT_EQ(r.last.phase, ClusterPhase::kUpgradeFailed);
  EXPECT_THAT(r.last.message, HasSubstr("came back on Talos 1.11.6 instead of 1.12.0"));
  EXPECT_EQ(world.log(), (std::vector<std::string>{"upgrade w-0"}));
}

TEST(RolloutTest, RollbackPolicyRollsBackAHealthyLookingFailure) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  world.profile().policy.on_failure = FailureAction::kRollback;
  // cp-0 comes back on the target, but its etcd member never becomes healthy.
  RolloutMemory mem;
  ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                 ReleaseCatalog::BuiltIn());
  OperationInFlight op{"cp-0",
                       V("1.12.0"),
                       "img:v1.12.0",
                       false,
                       "boot-cp-0",
                       "",
                       OperationPhase::kUpgradeCalled,
                       world.now(),
                       world.now() + std::chrono::minutes(30)};
  mem.in_flight.push_back(op);
  world.observed().nodes[0].talos = V("1.12.0");
  world.observed().nodes[0].boot_id = "new";
  world.observed().FindNode("cp-0")->etcd_healthy = false;
  RolloutInput in{
      world.profile(), plan, world.observed(), mem, {}, {}, world.now() + std::chrono::minutes(31)};
  RolloutDecision d = DecideNextAction(in);
  EXPECT_EQ(d.kind, ActionKind::kRollbackNode);
  EXPECT_EQ(d.node, "cp-0");
  ASSERT_TRUE(d.failure.has_value());
}

// A promotion chain behind a release marked broken holds: even with its upstream Ready and
// soaked on that release, the next cluster starts no node and says why.
TEST(RolloutTest, ABrokenReleaseHoldsAPromotionChainThatWouldGo) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  ReleaseCatalog catalog = ReleaseCatalog::BuiltIn();
  catalog.MarkTalosBroken(V("1.12.0"));
  const ClusterPlan plan =
      PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(), catalog);
  RolloutMemory mem;
  RolloutInput in{world.profile(), plan, world.observed(), mem, {}, {}, world.now()};
  in.promotion = PromotionVerdict{.ready = true, .message = "", .ready_at = std::nullopt};
  RolloutDecision d = DecideNextAction(in);
  EXPECT_EQ(d.kind, ActionKind::kNone);
  EXPECT_EQ(d.phase, ClusterPhase::kBlocked);
  EXPECT_THAT(d.message, HasSubstr("Talos 1.12.0 is marked broken by the Image Factory"));
  // Without the mark the same input starts the rollout.
  const ClusterPlan open = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                       ReleaseCatalog::BuiltIn());
  RolloutInput go{world.profile(), open, world.observed(), mem, {}, {}, world.now()};
  go.promotion = in.promotion;
  EXPECT_NE(DecideNextAction(go).kind, ActionKind::kNone);
}

TEST(RolloutTest, UnhealthyEtcdMakesNoCallAtAll) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  world.observed().nodes[2].etcd_healthy = false;
  RolloutMemory mem;
  ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                 ReleaseCatalog::BuiltIn());
  RolloutDecision d =
      DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
  EXPECT_EQ(d.kind, ActionKind::kNone);
  EXPECT_EQ(d.phase, ClusterPhase::kBlocked);
  EXPECT_THAT(d.message, HasSubstr("etcd member on cp-2 is not healthy"));
  EXPECT_TRUE(d.wait_until.has_value());
}

TEST(RolloutTest, TwoControlPlanesCannotLoseOne) {
  std::vector<NodeDef> nodes = {{"cp-0", NodeRole::kControlPlane, "1.11.6", "1.34.1", true},
                                {"cp-1", NodeRole::kControlPlane, "1.11.6", "1.34.1"}};
  RolloutWorld world(MakeProfile(nodes, "1.12.0", "1.34.1"), MakeObserved(nodes));
  RolloutMemory mem;
  RunResult r = RunRollout(world, mem);
  EXPECT_EQ(r.last.phase, ClusterPhase::kBlocked);
  EXPECT_THAT(r.last.message, HasSubstr("etcd has 2 members"));
  EXPECT_TRUE(world.log().empty());
}

TEST(RolloutTest, SingleNodeClusterUpgrades) {
  std::vector<NodeDef> nodes = {{"solo", NodeRole::kControlPlane, "1.11.6", "1.34.1", true}};
  RolloutWorld world(MakeProfile(nodes, "1.12.0", "1.34.1"), MakeObserved(nodes));
  RolloutMemory mem;
  RunResult r = RunRollout(world, mem);
  EXPECT_EQ(r.last.phase, ClusterPhase::kReady) << r.last.message;
  EXPECT_EQ(world.log(), (std::vector<std::string>{"upgrade solo"}));
}

TEST(RolloutTest, ClosedWindowWaitsUntilItOpens) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  world.profile().policy.windows = {
      MaintenanceWindow{{0, 6}, std::chrono::minutes(120), std::chrono::hours(4), "UTC"}};
  RolloutMemory mem;
  ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                 ReleaseCatalog::BuiltIn());
  const TimePoint opens = world.now() + std::chrono::hours(5);
  RolloutDecision d = DecideNextAction(
      {world.profile(), plan, world.observed(), mem, {false, opens}, {}, world.now()});
  EXPECT_EQ(d.phase, ClusterPhase::kWaitingForWindow);
  EXPECT_EQ(d.wait_until, opens);
  EXPECT_EQ(d.message,
            "waiting for the next maintenance window (opens " + FormatTimestamp(opens) + ")");
}

TEST(RolloutTest, PausedStartsNothingButFinishesANodeInFlight) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  world.profile().policy.paused = true;
  RolloutMemory mem;
  ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                 ReleaseCatalog::BuiltIn());
  RolloutDecision idle =
      DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
  EXPECT_EQ(idle.phase, ClusterPhase::kPaused);
  EXPECT_EQ(idle.kind, ActionKind::kNone);
  mem.in_flight.push_back({"w-0", V("1.12.0"), "img:v1.12.0", false, "boot-w-0", "",
                           OperationPhase::kRecorded, world.now(),
                           world.now() + std::chrono::minutes(30)});
  RolloutDecision busy =
      DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
  EXPECT_EQ(busy.kind, ActionKind::kCallUpgrade);
  EXPECT_EQ(busy.node, "w-0");
}

TEST(RolloutTest, ParallelWorkersUpToPolicy) {
  std::vector<NodeDef> nodes = {{"cp-0", NodeRole::kControlPlane, "1.11.6", "1.34.1", true}};
  for (int i = 0; i < 4; ++i) {
    nodes.push_back({"w-" + std::to_string(i), NodeRole::kWorker, "1.11.6", "1.34.1"});
  }
  RolloutWorld world(MakeProfile(nodes, "1.12.0", "1.34.1"), MakeObserved(nodes));
  world.profile().policy.max_parallel_workers = 2;
  world.profile().policy.settle = std::chrono::seconds(0);
  RolloutMemory mem;
  int max_in_flight = 0;
  for (int i = 0; i < 500; ++i) {
    ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                   ReleaseCatalog::BuiltIn());
    RolloutDecision d =
        DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
    if (!Carry(world, mem, d)) break;
    max_in_flight = std::max(max_in_flight, static_cast<int>(mem.in_flight.size()));
    for (const OperationInFlight& op : mem.in_flight) {
      if (op.node == "cp-0") {
        EXPECT_EQ(mem.in_flight.size(), 1u) << "control plane beside a worker";
      }
    }
  }
  EXPECT_EQ(max_in_flight, 2);
  for (const NodeObservation& n : world.observed().nodes) EXPECT_EQ(*n.talos, V("1.12.0"));
}

TEST(RolloutTest, RecordedFailureHaltsUntilTheTargetChanges) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  RolloutMemory mem;
  mem.failure = RolloutFailure{"w-0", V("1.12.0"), "boom", world.now()};
  ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                 ReleaseCatalog::BuiltIn());
  RolloutDecision halted =
      DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
  EXPECT_EQ(halted.phase, ClusterPhase::kUpgradeFailed);
  EXPECT_EQ(halted.kind, ActionKind::kNone);
  world.profile().talos_version = V("1.12.0");
  mem.failure->talos_target = V("1.11.7");  // an older attempt
  RolloutDecision moving =
      DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
  EXPECT_NE(moving.phase, ClusterPhase::kUpgradeFailed);
}

// `talos-reconciler retry` writes a new token into the profile: the halt is lifted for it, and a
// failure under the new token halts again (it remembers the token it happened under).
TEST(RolloutTest, RecordedFailureHaltsUntilARetryIsAsked) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  RolloutMemory mem;
  mem.failure = RolloutFailure{"w-0", V("1.12.0"), "boom", world.now()};
  EXPECT_TRUE(HaltedByFailure(mem, world.profile()));
  world.profile().retry_token = "2026-12-02T10:15:00Z";
  EXPECT_FALSE(HaltedByFailure(mem, world.profile()));
  ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                 ReleaseCatalog::BuiltIn());
  mem.failure.reset();  // as the reconciler clears a failure that no longer halts
  RolloutDecision d =
      DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
  EXPECT_NE(d.phase, ClusterPhase::kUpgradeFailed) << d.message;
  RolloutDecision refused = ActionRefused(d, world.profile(), "refused again", world.now());
  ASSERT_TRUE(refused.failure.has_value());
  EXPECT_EQ(refused.failure->retry, "2026-12-02T10:15:00Z");
  mem.failure = refused.failure;
  EXPECT_TRUE(HaltedByFailure(mem, world.profile()));
}

TEST(RolloutTest, KubernetesStepIsHandedToTheJob) {
  auto nodes = FiveNodes("1.12.0", "1.34.1");
  RolloutWorld world(MakeProfile(nodes, "1.12.0", "1.35.0"), MakeObserved(nodes));
  RolloutMemory mem;
  ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                 ReleaseCatalog::BuiltIn());
  RolloutDecision d =
      DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
  EXPECT_EQ(d.kind, ActionKind::kStartKubernetesUpgrade);
  EXPECT_EQ(d.phase, ClusterPhase::kUpgradingKubernetes);
}

// A reverted bump while w-0 reboots into 1.12.0: w-0 is seen through (cutting it short would
// leave it cordoned on an armed slot), the decisions meanwhile say so, and no other node starts
// and none goes back: the rollout rests Blocked naming w-0.
TEST(RolloutTest, ARevertMidUpgradeFinishesTheNodeInFlightAndStartsNoOther) {
  RolloutWorld world = FiveNodeWorld("1.11.6", "1.12.0");
  RolloutMemory mem;
  bool reverted = false, noted = false;
  RolloutDecision d;
  for (int i = 0; i < 500; ++i) {
    ClusterPlan plan = PlanCluster(world.profile(), world.observed(), SupportMatrix::BuiltIn(),
                                   ReleaseCatalog::BuiltIn());
    d = DecideNextAction({world.profile(), plan, world.observed(), mem, {}, {}, world.now()});
    noted = noted || d.message.find(
                         "finishing the upgrade of w-0 begun before the desired "
                         "Talos went back to 1.11.6") != std::string::npos;
    if (d.kind == ActionKind::kNone) {
      if (!d.wait_until || d.phase == ClusterPhase::kBlocked) break;
      world.AdvanceTo(*d.wait_until);
      continue;
    }
    world.Apply(d);
    Record(d, mem, world.profile().policy, world.now());
    if (!reverted && d.kind == ActionKind::kCallUpgrade) {
      world.profile().talos_version = V("1.11.6");
      reverted = true;
    }
  }
  ASSERT_TRUE(reverted);
  EXPECT_TRUE(noted) << "no decision said w-0 was being finished after the revert";
  EXPECT_EQ(d.phase, ClusterPhase::kBlocked) << d.message;
  EXPECT_THAT(d.message, HasSubstr("a downgrade is not performed: w-0 (1.12.0) runs Talos"));
  EXPECT_EQ(world.log(), std::vector<std::string>{"upgrade w-0"});
  EXPECT_TRUE(mem.in_flight.empty());
  for (const NodeObservation& n : world.observed().nodes) {
    EXPECT_EQ(n.talos->ToString(), n.name == "w-0" ? "1.12.0" : "1.11.6") << n.name;
  }
}

}  // namespace
}  // namespace tr::core
