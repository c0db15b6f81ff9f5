#include "core/planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/gates.h"
#include "tests/support/fleet_fixtures.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ClusterPlan Plan(const ClusterProfile& p, const ObservedCluster& o) {
  return PlanCluster(p, o, SupportMatrix::BuiltIn(), ReleaseCatalog::BuiltIn());
}

// One row: from (talos, k8s) to (talos, k8s), the expected hops as "talos:1.12.0" strings.
struct PathCase {
  std::string name;
  std::string talos_from, kube_from, talos_to, kube_to;
  UpgradeOrder order;
  std::vector<std::string> hops;  // empty with blocked_substring set: blocked
  std::string blocked_substring;
};

class PlannerPathTest : public testing::TestWithParam<PathCase> {};

TEST_P(PlannerPathTest, ChoosesTheExpectedHops) {
  const PathCase& c = GetParam();
  auto nodes = FiveNodes(c.talos_from, c.kube_from);
  ClusterProfile profile = MakeProfile(nodes, c.talos_to, c.kube_to);
  profile.policy.upgrade_order = c.order;
  ClusterPlan plan = Plan(profile, MakeObserved(nodes));
  if (!c.blocked_substring.empty()) {
    EXPECT_EQ(plan.status, PlanStatus::kBlocked);
    EXPECT_THAT(plan.message, HasSubstr(c.blocked_substring));
    EXPECT_TRUE(plan.steps.empty());
    return;
  }
  std::vector<std::string> hops;
  for (const PlanStep& s : plan.steps) {
    hops.push_back(std::string(StepTypeName(s.type)) + ":" + s.to.ToString());
  }
  EXPECT_EQ(hops, c.hops) << plan.message;
  EXPECT_EQ(plan.status, c.hops.empty() ? PlanStatus::kUpToDate : PlanStatus::kPlanned);
}

INSTANTIATE_TEST_SUITE_P(
    Paths, PlannerPathTest,
    testing::Values(
        PathCase{
            "UpToDate", "1.12.0", "1.35.0", "1.12.0", "1.35.0", UpgradeOrder::kTalosFirst, {}, ""},
        PathCase{"TalosPatch",
                 "1.11.5",
                 "1.34.1",
                 "1.11.6",
                 "1.34.1",
                 UpgradeOrder::kTalosFirst,
                 {"talos:1.11.6"},
                 ""},
        PathCase{"TalosMinorThroughLatestPatches",
                 "1.9.2",
                 "1.32.0",
                 "1.12.0",
                 "1.32.0",
                 UpgradeOrder::kTalosFirst,
                 {"talos:1.10.8", "talos:1.11.6", "talos:1.12.0"},
                 ""},
        // The desired Kubernetes needs a newer Talos: Talos goes first.
        PathCase{"TalosFirstWhenKubernetesNeedsIt",
                 "1.11.6",
                 "1.34.1",
                 "1.12.0",
                 "1.35.0",
                 UpgradeOrder::kKubernetesFirst,
                 {"talos:1.12.0", "kubernetes:1.35.0"},
                 ""},
        // The target Talos drops the running Kubernetes: Kubernetes goes first.
        PathCase{"KubernetesFirstWhenTalosDropsIt",
                 "1.12.0",
                 "1.30.2",
                 "1.13.9",
                 "1.31.4",
                 UpgradeOrder::kTalosFirst,
                 {"kubernetes:1.31.4", "talos:1.13.9"},
                 ""},
        PathCase{"BothSafeTalosFirst",
                 "1.11.6",
                 "1.33.0",
                 "1.12.0",
                 "1.34.1",
                 UpgradeOrder::kTalosFirst,
                 {"talos:1.12.0", "kubernetes:1.34.1"},
                 ""},
        PathCase{"BothSafeKubernetesFirstByPolicy",
                 "1.11.6",
                 "1.33.0",
                 "1.12.0",
                 "1.34.1",
                 UpgradeOrder::kKubernetesFirst,
                 {"kubernetes:1.34.1", "talos:1.12.0"},
                 ""},
        PathCase{"KubernetesOneMinorAtATime",
                 "1.12.0",
                 "1.32.0",
                 "1.12.0",
                 "1.35.0",
                 UpgradeOrder::kTalosFirst,
                 {"kubernetes:1.33.6", "kubernetes:1.34.1", "kubernetes:1.35.0"},
                 ""},
        PathCase{"Interleaved",
                 "1.9.6",
                 "1.27.16",
                 "1.12.0",
                 "1.35.0",
                 UpgradeOrder::kTalosFirst,
                 // Talos 1.10 drops Kubernetes 1.27, so Kubernetes moves first.
                 {"kubernetes:1.28.15", "talos:1.10.8", "kubernetes:1.29.7", "talos:1.11.6",
                  "kubernetes:1.30.5", "talos:1.12.0", "kubernetes:1.31.4", "kubernetes:1.32.4",
                  "kubernetes:1.33.6", "kubernetes:1.34.1", "kubernetes:1.35.0"},
                 ""},
        PathCase{"UnsupportedDesiredPair",
                 "1.11.6",
                 "1.34.1",
                 "1.11.6",
                 "1.35.0",
                 UpgradeOrder::kTalosFirst,
                 {},
                 "Talos 1.11.6 does not support Kubernetes 1.35.0"},
        PathCase{"UnknownTalosMinor",
                 "1.12.0",
                 "1.35.0",
                 "1.16.0",
                 "1.35.0",
                 UpgradeOrder::kTalosFirst,
                 {},
                 "not in the support matrix"},
        PathCase{"TalosDowngradeNotAllowed",
                 "1.12.1",
                 "1.35.0",
                 "1.12.0",
                 "1.35.0",
                 UpgradeOrder::kTalosFirst,
                 {},
                 "allowDowngrade"},
        PathCase{"KubernetesMinorDowngrade",
                 "1.12.0",
                 "1.35.0",
                 "1.12.0",
                 "1.34.1",
                 UpgradeOrder::kTalosFirst,
                 {},
                 "cannot be downgraded"},
        PathCase{"MissingIntermediateRelease",
                 "1.15.0",
                 "1.36.3",
                 "1.15.0",
                 "1.38.0",
                 UpgradeOrder::kTalosFirst,
                 {},
                 "no known release of Kubernetes 1.37"}),
    [](const auto& row) { return row.param.name; });

TEST(PlannerTest, NoSafePathIsBlockedWithTheStuckPair) {
  // Talos 1.6 with Kubernetes 1.24 -> Talos 1.7 needs 1.25, and Kubernetes 1.25 needs ... the
  // matrix allows it; make the path impossible with a custom matrix instead.
  auto nodes = FiveNodes("1.8.4", "1.26.15");
  ClusterProfile profile = MakeProfile(nodes, "1.9.6", "1.27.16");
  SupportMatrix matrix = SupportMatrix::BuiltIn();
  matrix.Set({{1, 9}, {1, 27}, {1, 32}, *ParseTalosVersion("1.8.0")});  // 1.9 drops 1.26
  matrix.Set({{1, 8}, {1, 26}, {1, 26}, *ParseTalosVersion("1.5.0")});  // 1.8 lacks 1.27
  ClusterPlan plan = PlanCluster(profile, MakeObserved(nodes), matrix, ReleaseCatalog::BuiltIn());
  EXPECT_EQ(plan.status, PlanStatus::kBlocked);
  EXPECT_THAT(plan.message, HasSubstr("No safe upgrade path"));
  EXPECT_THAT(plan.message, HasSubstr("Talos 1.9.6 does not support Kubernetes 1.26.15"));
  EXPECT_THAT(plan.message, HasSubstr("Talos 1.8.4 does not support Kubernetes 1.27.16"));
}

TEST(PlannerTest, TalosHopBelowMinimumSourceIsBlocked) {
  auto nodes = FiveNodes("1.9.6", "1.30.5");
  ClusterProfile profile = MakeProfile(nodes, "1.10.8", "1.30.5");
  SupportMatrix matrix = SupportMatrix::BuiltIn();
  matrix.Set({{1, 10}, {1, 28}, {1, 33}, *ParseTalosVersion("1.9.7")});
  ClusterPlan plan = PlanCluster(profile, MakeObserved(nodes), matrix, ReleaseCatalog::BuiltIn());
  EXPECT_EQ(plan.status, PlanStatus::kBlocked);
  EXPECT_THAT(plan.message, HasSubstr("cannot be upgraded from 1.9.6 (needs 1.9.7 or newer)"));
}

TEST(PlannerTest, OrdersWorkersThenControlPlanesWithLeaderLast) {
  auto nodes = FiveNodes("1.11.6", "1.34.1");
  ClusterPlan plan = Plan(MakeProfile(nodes, "1.12.0", "1.34.1"), MakeObserved(nodes));
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].installer_image, "factory.talos.dev/metal-installer/abc:v1.12.0");
  EXPECT_THAT(plan.steps[0].Nodes(), ElementsAre("w-0", "w-1", "cp-0", "cp-2", "cp-1"));
  EXPECT_EQ(plan.steps[0].batches.size(), 5u);
}

TEST(PlannerTest, OwnNodeGoesLastInItsGroup) {
  auto nodes = FiveNodes("1.11.6", "1.34.1");
  ClusterProfile profile = MakeProfile(nodes, "1.12.0", "1.34.1");
  ClusterPlan worker_self = Plan(profile, MakeObserved(nodes, "w-0"));
  EXPECT_THAT(worker_self.steps[0].Nodes(), ElementsAre("w-1", "w-0", "cp-0", "cp-2", "cp-1"));
  ClusterPlan cp_self = Plan(profile, MakeObserved(nodes, "cp-0"));
  EXPECT_THAT(cp_self.steps[0].Nodes(), ElementsAre("w-0", "w-1", "cp-2", "cp-0", "cp-1"));
}

TEST(PlannerTest, BatchesWorkersByPolicy) {
  std::vector<NodeDef> nodes = {{"cp-0", NodeRole::kControlPlane, "1.11.6", "1.34.1", true}};
  for (int i = 0; i < 5; ++i) {
    nodes.push_back({"w-" + std::to_string(i), NodeRole::kWorker, "1.11.6", "1.34.1"});
  }
  ClusterProfile profile = MakeProfile(nodes, "1.12.0", "1.34.1");
  profile.policy.max_parallel_workers = 2;
  ClusterPlan plan = Plan(profile, MakeObserved(nodes));
  ASSERT_EQ(plan.steps.size(), 1u);
  std::vector<std::vector<std::string>> expected = {
      {"w-0", "w-1"}, {"w-2", "w-3"}, {"w-4"}, {"cp-0"}};
  EXPECT_EQ(plan.steps[0].batches, expected);
}

TEST(PlannerTest, SkipsNodesAlreadyOnTheTarget) {
  auto nodes = FiveNodes("1.11.6", "1.34.1");
  nodes[3].talos = "1.12.0";  // w-0 done
  nodes[0].talos = "1.12.0";  // cp-0 done
  ClusterPlan plan = Plan(MakeProfile(nodes, "1.12.0", "1.34.1"), MakeObserved(nodes));
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_THAT(plan.steps[0].Nodes(), ElementsAre("w-1", "cp-2", "cp-1"));
  EXPECT_EQ(plan.steps[0].from.ToString(), "1.11.6");
}

// A release the Image Factory marks broken half-way through: the nodes still to go get nothing.
TEST(PlannerTest, ABrokenTargetBlocksTheNodesStillToGoNamingTheRelease) {
  auto nodes = FiveNodes("1.11.6", "1.34.1");
  nodes[3].talos = "1.12.0";  // w-0 done
  ReleaseCatalog catalog = ReleaseCatalog::BuiltIn();
  catalog.MarkTalosBroken(*ParseTalosVersion("1.12.0"));
  ClusterPlan plan = PlanCluster(MakeProfile(nodes, "1.12.0", "1.34.1"), MakeObserved(nodes),
                                 SupportMatrix::BuiltIn(), catalog);
  EXPECT_EQ(plan.status, PlanStatus::kBlocked);
  EXPECT_THAT(plan.message, HasSubstr("Talos 1.12.0 is marked broken by the Image Factory"));
  EXPECT_TRUE(plan.steps.empty());
  // Another patch is not affected.
  auto older = FiveNodes("1.11.5", "1.34.1");
  EXPECT_EQ(PlanCluster(MakeProfile(older, "1.11.6", "1.34.1"), MakeObserved(older),
                        SupportMatrix::BuiltIn(), catalog)
                .status,
            PlanStatus::kPlanned);
}

TEST(PlannerTest, ABrokenIntermediateHopBlocksButABrokenReleaseEveryNodeRunsDoesNot) {
  ReleaseCatalog catalog = ReleaseCatalog::BuiltIn();
  catalog.MarkTalosBroken(*ParseTalosVersion("1.11.6"));
  auto from_110 = FiveNodes("1.10.8", "1.33.6");
  ClusterPlan through = PlanCluster(MakeProfile(from_110, "1.12.0", "1.33.6"),
                                    MakeObserved(from_110), SupportMatrix::BuiltIn(), catalog);
  EXPECT_EQ(through.status, PlanStatus::kBlocked);
  EXPECT_THAT(through.message, HasSubstr("Talos 1.11.6 is marked broken"));
  auto on_it = FiveNodes("1.11.6", "1.34.1");
  ClusterPlan ready = PlanCluster(MakeProfile(on_it, "1.11.6", "1.34.1"), MakeObserved(on_it),
                                  SupportMatrix::BuiltIn(), catalog);
  EXPECT_EQ(ready.status, PlanStatus::kUpToDate) << ready.message;
}

TEST(PlannerTest, KubernetesStepOrdersControlPlanesThenWorkers) {
  auto nodes = FiveNodes("1.12.0", "1.34.1");
  ClusterPlan plan = Plan(MakeProfile(nodes, "1.12.0", "1.35.0"), MakeObserved(nodes));
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].type, StepType::kKubernetes);
  EXPECT_THAT(plan.steps[0].Nodes(), ElementsAre("cp-0", "cp-1", "cp-2", "w-0", "w-1"));
}

TEST(PlannerTest, UnreachableNodeBlocks) {
  auto nodes = FiveNodes("1.11.6", "1.34.1");
  ObservedCluster observed = MakeObserved(nodes);
  observed.nodes[4].reachable = false;
  ClusterPlan plan = Plan(MakeProfile(nodes, "1.12.0", "1.34.1"), observed);
  EXPECT_EQ(plan.status, PlanStatus::kBlocked);
  EXPECT_THAT(plan.message, HasSubstr("node w-1 is unreachable"));
}

TEST(PlannerTest, AllowedDowngradeGoesDownOneMinorAtATime) {
  auto nodes = FiveNodes("1.12.0", "1.33.0");
  ClusterProfile profile = MakeProfile(nodes, "1.10.8", "1.33.0");
  profile.policy.allow_downgrade = true;
  ClusterPlan plan = Plan(profile, MakeObserved(nodes));
  ASSERT_EQ(plan.status, PlanStatus::kPlanned) << plan.message;
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[0].to.ToString(), "1.11.6");
  EXPECT_EQ(plan.steps[1].to.ToString(), "1.10.8");
}

TEST(PlannerTest, ARevertedBumpIsBlockedNamingTheNodesAlreadyOnTheNewerVersion) {
  // 1.11.6 -> 1.12.0 reached both workers, then the bump was reverted.
  auto nodes = FiveNodes("1.11.6", "1.34.1");
  nodes[3].talos = "1.12.0";
  nodes[4].talos = "1.12.0";
  ClusterPlan plan = Plan(MakeProfile(nodes, "1.11.6", "1.34.1"), MakeObserved(nodes));
  EXPECT_EQ(plan.status, PlanStatus::kBlocked);
  EXPECT_TRUE(plan.steps.empty());
  EXPECT_EQ(plan.message,
            "a downgrade is not performed: w-0 (1.12.0), w-1 (1.12.0) run Talos newer than the "
            "desired 1.11.6; set policy.allowDowngrade to go back, or ask for 1.12.0 again to "
            "go on");
  nodes[4].talos = "1.11.6";
  plan = Plan(MakeProfile(nodes, "1.11.6", "1.34.1"), MakeObserved(nodes));
  EXPECT_THAT(plan.message, HasSubstr(": w-0 (1.12.0) runs Talos newer than"));
}

TEST(PlannerTest, AKubernetesPatchRevertIsBlockedNamingTheNodes) {
  auto nodes = FiveNodes("1.12.0", "1.34.1");
  nodes[0].kubelet = "1.34.2";
  ClusterPlan plan = Plan(MakeProfile(nodes, "1.12.0", "1.34.1"), MakeObserved(nodes));
  EXPECT_EQ(plan.status, PlanStatus::kBlocked);
  EXPECT_THAT(plan.message, HasSubstr("not performed: cp-0 (1.34.2) runs Kubernetes newer than "
                                      "the desired 1.34.1"));
}

TEST(PlannerTest, TheGatesOfALifecycleStepSayWhatADrainHeldByABudgetDoes) {
  auto nodes = FiveNodes("1.13.2", "1.35.0");
  ClusterProfile profile = MakeProfile(nodes, "1.13.9", "1.35.0");
  const ClusterPlan plan = Plan(profile, MakeObserved(nodes));
  ASSERT_EQ(plan.status, PlanStatus::kPlanned) << plan.message;
  EXPECT_THAT(PlanGates(profile, plan),
              testing::Contains("from Talos 1.13 each node is cordoned and drained before its "
                                "reboot, PodDisruptionBudgets honoured; pods still there after "
                                "run's --drain-timeout: the rollout halts before the node "
                                "reboots (drain.onTimeout: halt)"));
  profile.policy.drain = {std::chrono::minutes(10), DrainTimeoutAction::kForce};
  EXPECT_THAT(PlanGates(profile, plan),
              testing::Contains(HasSubstr("after 10m: deleted past their budgets, and the "
                                          "upgrade goes on (drain.onTimeout: force)")));
  // Below 1.13 Talos drains the node itself: nothing to say.
  auto legacy = FiveNodes("1.11.6", "1.34.1");
  ClusterProfile old = MakeProfile(legacy, "1.12.0", "1.34.1");
  EXPECT_THAT(PlanGates(old, Plan(old, MakeObserved(legacy))),
              testing::Not(testing::Contains(HasSubstr("drained before its reboot"))));
}

TEST(PlannerTest, PausedStillPlansButSaysSo) {
  auto nodes = FiveNodes("1.11.6", "1.34.1");
  ClusterProfile profile = MakeProfile(nodes, "1.12.0", "1.34.1");
  profile.policy.paused = true;
  ClusterPlan plan = Plan(profile, MakeObserved(nodes));
  EXPECT_EQ(plan.status, PlanStatus::kPlanned);
  EXPECT_TRUE(plan.paused);
  EXPECT_THAT(plan.message, HasSubstr("paused"));
}

TEST(PlannerTest, EstimateUsesRecordedDurationsAndSettle) {
  auto nodes = FiveNodes("1.11.6", "1.34.1");
  ClusterProfile profile = MakeProfile(nodes, "1.12.0", "1.34.1");
  profile.policy.settle = std::chrono::seconds(30);
  ObservedCluster observed = MakeObserved(nodes);
  observed.nodes[0].last_upgrade_duration = std::chrono::seconds(100);
  ClusterPlan plan = Plan(profile, observed);
  // 4 nodes at the default, cp-0 at 100 s, plus 5 settles.
  EXPECT_EQ(plan.estimate, 4 * kDefaultTalosNodeDuration + std::chrono::seconds(100) +
                               5 * std::chrono::seconds(30));
}

TEST(PlannerTest, LifecycleApiRule) {
  EXPECT_FALSE(UsesLifecycleApi(V("1.12.4")));
  EXPECT_FALSE(UsesLifecycleApi(V("1.13.0-alpha.2")));
  EXPECT_TRUE(UsesLifecycleApi(V("1.13.0-alpha.3")));
  EXPECT_TRUE(UsesLifecycleApi(V("1.13.0")));
  EXPECT_TRUE(UsesLifecycleApi(V("1.15.1")));
  EXPECT_FALSE(UsesLifecycleApi(V("2.0.0")));
}

// A profile naming an Image Factory schematic: planned once its installer is known; a node
// whose schematic differs at the desired version is reinstalled at that version.
constexpr char kIscsiSchematic[] =
    "613e1592b2da41ae5e265e8789429f22e121aab91cb4deb6bc3c0b6262961245";

ClusterProfile SchematicProfile(const std::vector<testing_fixtures::NodeDef>& nodes,
                                std::string_view talos) {
  ClusterProfile profile = MakeProfile(nodes, talos, "1.35.0");
  profile.talos_factory = FactoryInstaller{};
  profile.talos_factory->schematic.official_extensions = {"siderolabs/iscsi-tools"};
  profile.talos_image = "127.0.0.1:5000/metal-installer/" + std::string(kIscsiSchematic);
  profile.talos_schematic_id = kIscsiSchematic;
  return profile;
}

TEST(PlannerSchematicTest, AVersionUpgradeInstallsTheSchematicsInstaller) {
  const auto nodes = FiveNodes("1.11.6", "1.35.0");
  ClusterPlan plan = Plan(SchematicProfile(nodes, "1.12.0"), MakeObserved(nodes));
  ASSERT_EQ(plan.status, PlanStatus::kPlanned) << plan.message;
  EXPECT_EQ(plan.steps[0].installer_image,
            "127.0.0.1:5000/metal-installer/" + std::string(kIscsiSchematic) + ":v1.12.0");
}

TEST(PlannerSchematicTest, AnUnknownInstallerBlocks) {
  const auto nodes = FiveNodes("1.11.6", "1.35.0");
  ClusterProfile profile = SchematicProfile(nodes, "1.12.0");
  profile.talos_image.clear();
  profile.talos_schematic_id.clear();
  ClusterPlan plan = Plan(profile, MakeObserved(nodes));
  EXPECT_EQ(plan.status, PlanStatus::kBlocked);
  EXPECT_THAT(plan.message, HasSubstr("no Image Factory has given the schematic's ID"));
  EXPECT_TRUE(plan.steps.empty());
}

TEST(PlannerSchematicTest, AnotherSchematicAtTheDesiredVersionIsReinstalledAtThatVersion) {
  const auto nodes = FiveNodes("1.12.0", "1.35.0");
  ObservedCluster observed = MakeObserved(nodes);
  for (NodeObservation& n : observed.nodes) n.schematic = kIscsiSchematic;
  EXPECT_EQ(Plan(SchematicProfile(nodes, "1.12.0"), observed).status, PlanStatus::kUpToDate);

  // cp-1 and w-0 run the vanilla image: only they are reinstalled, workers first.
  observed.nodes[1].schematic = std::string(kEmptySchematicId);
  observed.nodes[3].schematic = std::string(kEmptySchematicId);
  ClusterPlan plan = Plan(SchematicProfile(nodes, "1.12.0"), observed);
  ASSERT_EQ(plan.status, PlanStatus::kPlanned) << plan.message;
  ASSERT_EQ(plan.steps.size(), 1u);
  const PlanStep& step = plan.steps[0];
  EXPECT_EQ(step.from, V("1.12.0"));
  EXPECT_EQ(step.to, V("1.12.0"));
  EXPECT_EQ(step.schematic, kIscsiSchematic);
  EXPECT_EQ(step.installer_image,
            "127.0.0.1:5000/metal-installer/" + std::string(kIscsiSchematic) + ":v1.12.0");
  EXPECT_EQ(step.Nodes(), (std::vector<std::string>{observed.nodes[3].name,
                                                    observed.nodes[1].name}));
  EXPECT_EQ(plan.message, "Talos 1.12.0 reinstalled with schematic " +
                              std::string(kIscsiSchematic) + " on 2 nodes");
}

// A version change and a schematic change together are one upgrade per node: a node already
// on the desired version with the old schematic joins the version step, not a second one.
TEST(PlannerSchematicTest, AVersionAndASchematicChangeAreOneStep) {
  auto nodes = FiveNodes("1.11.6", "1.35.0");
  ObservedCluster observed = MakeObserved(nodes);
  observed.nodes[4].talos = V("1.12.0");
  observed.nodes[4].schematic = std::string(kEmptySchematicId);
  ClusterPlan plan = Plan(SchematicProfile(nodes, "1.12.0"), observed);
  ASSERT_EQ(plan.status, PlanStatus::kPlanned) << plan.message;
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].from, V("1.11.6"));
  EXPECT_EQ(plan.steps[0].Nodes().size(), 5u);
}

// A profile without a schematic never looks at the nodes' schematics.
TEST(PlannerSchematicTest, AProfileWithoutASchematicIgnoresTheNodes) {
  const auto nodes = FiveNodes("1.12.0", "1.35.0");
  ObservedCluster observed = MakeObserved(nodes);
  observed.nodes[1].schematic = kIscsiSchematic;
  EXPECT_EQ(Plan(MakeProfile(nodes, "1.12.0", "1.35.0"), observed).status,
            PlanStatus::kUpToDate);
}

TEST(PlannerSchematicTest, AnImageWithoutASchematicIsTheEmptyOne) {
  const auto nodes = FiveNodes("1.12.0", "1.35.0");
  ClusterProfile profile = SchematicProfile(nodes, "1.12.0");
  profile.talos_factory->schematic = Schematic{};
  profile.talos_schematic_id = std::string(kEmptySchematicId);
  EXPECT_EQ(Plan(profile, MakeObserved(nodes)).status, PlanStatus::kUpToDate);
}

TEST(PlannerSchematicTest, ANodeWhoseExtensionsWereNotReadBlocksRatherThanCountsAsVanilla) {
  const auto nodes = FiveNodes("1.12.0", "1.35.0");
  ObservedCluster observed = MakeObserved(nodes);
  for (NodeObservation& n : observed.nodes) n.schematic = kIscsiSchematic;
  observed.nodes[2].schematic.reset();
  observed.nodes[2].extensions_observed = false;
  ClusterPlan plan = Plan(SchematicProfile(nodes, "1.12.0"), observed);
  EXPECT_EQ(plan.status, PlanStatus::kBlocked);
  EXPECT_THAT(plan.message, HasSubstr("is not known: its ExtensionStatuses could not be read"));
}

const std::string kGpuSchematic(64, 'd');

// w-1 (a GPU worker) names spec.nodes[].schematic, resolved to kGpuSchematic.
ClusterProfile WithGpuWorker(ClusterProfile profile) {
  NodeSpec& gpu = profile.nodes[4];
  gpu.schematic = Schematic{};
  gpu.schematic->official_extensions = {"siderolabs/nvidia-container-toolkit"};
  gpu.talos_image = "127.0.0.1:5000/metal-installer/" + kGpuSchematic;
  gpu.talos_schematic_id = kGpuSchematic;
  return profile;
}

TEST(PlannerSchematicTest, AGpuWorkerWithItsOwnSchematicGetsItsOwnInstaller) {
  const auto nodes = FiveNodes("1.11.6", "1.35.0");
  ClusterPlan plan = Plan(WithGpuWorker(SchematicProfile(nodes, "1.12.0")), MakeObserved(nodes));
  ASSERT_EQ(plan.status, PlanStatus::kPlanned) << plan.message;
  ASSERT_EQ(plan.steps.size(), 1u);
  const PlanStep& step = plan.steps[0];
  const std::string gpu = nodes[4].name, other = nodes[3].name;
  EXPECT_EQ(step.Nodes().size(), 5u);
  EXPECT_EQ(InstallerFor(step, gpu),
            "127.0.0.1:5000/metal-installer/" + kGpuSchematic + ":v1.12.0");
  EXPECT_EQ(SchematicFor(step, gpu), kGpuSchematic);
  EXPECT_EQ(InstallerFor(step, other), step.installer_image);
  EXPECT_EQ(SchematicFor(step, other), kIscsiSchematic);
  EXPECT_EQ(step.own_installers.size(), 1u);
}

TEST(PlannerSchematicTest, ANodeIsReinstalledOnlyWhenItDoesNotRunItsOwnSchematic) {
  const auto nodes = FiveNodes("1.12.0", "1.35.0");
  const ClusterProfile profile = WithGpuWorker(SchematicProfile(nodes, "1.12.0"));
  ObservedCluster observed = MakeObserved(nodes);
  for (NodeObservation& n : observed.nodes) n.schematic = kIscsiSchematic;
  observed.nodes[4].schematic = kGpuSchematic;
  EXPECT_EQ(Plan(profile, observed).status, PlanStatus::kUpToDate);

  // The GPU worker still runs the profile's schematic: it alone is reinstalled, with its own.
  observed.nodes[4].schematic = kIscsiSchematic;
  ClusterPlan plan = Plan(profile, observed);
  ASSERT_EQ(plan.status, PlanStatus::kPlanned) << plan.message;
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].Nodes(), std::vector<std::string>{nodes[4].name});
  EXPECT_EQ(InstallerFor(plan.steps[0], nodes[4].name),
            "127.0.0.1:5000/metal-installer/" + kGpuSchematic + ":v1.12.0");
  EXPECT_EQ(plan.message,
            "Talos 1.12.0 reinstalled with schematic " + kGpuSchematic + " on 1 node");
}

TEST(PlannerSchematicTest, ANodesUnknownInstallerBlocksNamingIt) {
  const auto nodes = FiveNodes("1.11.6", "1.35.0");
  ClusterProfile profile = WithGpuWorker(SchematicProfile(nodes, "1.12.0"));
  profile.nodes[4].talos_image.clear();
  profile.nodes[4].talos_schematic_id.clear();
  ClusterPlan plan = Plan(profile, MakeObserved(nodes));
  EXPECT_EQ(plan.status, PlanStatus::kBlocked);
  EXPECT_THAT(plan.message, HasSubstr("node " + nodes[4].name + "'s own schematic is not known"));
}

}  // namespace
}  // namespace tr::core
