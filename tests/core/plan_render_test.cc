#include "core/plan_render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fleet_fixtures.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;
using ::testing::HasSubstr;

std::vector<PlanReportEntry> SampleReport() {
  auto nodes = FiveNodes("1.11.6", "1.34.1");
  ClusterProfile profile = MakeProfile(nodes, "1.12.0", "1.35.0");
  ClusterPlan planned = PlanCluster(profile, MakeObserved(nodes), SupportMatrix::BuiltIn(),
                                    ReleaseCatalog::BuiltIn());
  ClusterProfile unsupported = MakeProfile(nodes, "1.11.6", "1.35.0");
  unsupported.name = "edge";
  ClusterPlan blocked = PlanCluster(unsupported, MakeObserved(nodes), SupportMatrix::BuiltIn(),
                                    ReleaseCatalog::BuiltIn());
  Diagnostic bad{"clusters/broken.yaml", 4, 7, "spec.nodes[0].role",
                 "must be controlplane or worker"};
  return {{"prod", planned, {}, std::nullopt, {}},
          {"edge", blocked, {}, std::nullopt, {}},
          {"broken", std::nullopt, {bad}, std::nullopt, {}}};
}

TEST(PlanRenderTest, TextShowsOrderImageGatesAndEstimate) {
  std::string text = RenderPlanText(SampleReport());
  EXPECT_THAT(text, HasSubstr("prod: planned"));
  EXPECT_THAT(text, HasSubstr("1. Talos 1.11.6 → 1.12.0"));
  EXPECT_THAT(text, HasSubstr("nodes: w-0 → w-1 → cp-0 → cp-2 → cp-1"));
  EXPECT_THAT(text, HasSubstr("image: factory.talos.dev/metal-installer/abc:v1.12.0"));
  EXPECT_THAT(text, HasSubstr("etcd snapshot saved before the first control plane"));
  EXPECT_THAT(text, HasSubstr("estimate: "));
  EXPECT_THAT(text, HasSubstr("edge: blocked"));
  EXPECT_THAT(text, HasSubstr("broken: invalid\n  clusters/broken.yaml:4:7:"));
}

TEST(PlanRenderTest, SaysThatTheLegacyPrePullDoesNotShortenTheUpgrade) {
  const std::string legacy = RenderPlanText(SampleReport());  // from Talos 1.11.6
  EXPECT_THAT(legacy, HasSubstr("below Talos 1.13 nodes are not pre-pulled"));
  auto nodes = FiveNodes("1.13.2", "1.35.0");
  ClusterProfile profile = MakeProfile(nodes, "1.13.9", "1.35.0");
  ClusterPlan plan = PlanCluster(profile, MakeObserved(nodes), SupportMatrix::BuiltIn(),
                                 ReleaseCatalog::BuiltIn());
  ASSERT_EQ(plan.status, PlanStatus::kPlanned) << plan.message;
  const std::string lifecycle = RenderPlanText({{"prod", plan, {}, std::nullopt, {}}});
  EXPECT_THAT(lifecycle, HasSubstr("installer image pulled on every node"));
  EXPECT_THAT(lifecycle, ::testing::Not(HasSubstr("nodes are not pre-pulled")));
}

TEST(PlanRenderTest, MarkdownHasATableAndTheBlockedReason) {
  std::string md = RenderPlanMarkdown(SampleReport());
  EXPECT_THAT(md, HasSubstr("### `prod`: planned"));
  EXPECT_THAT(md, HasSubstr("| 1 | Talos 1.11.6 → 1.12.0 | w-0 → w-1 → cp-0 → cp-2 → cp-1 |"));
  EXPECT_THAT(md, HasSubstr("> **Blocked:** Talos 1.11.6 does not support Kubernetes 1.35.0"));
  EXPECT_THAT(md, HasSubstr("- `clusters/broken.yaml:4:7: spec.nodes[0].role:"));
}

TEST(PlanRenderTest, ShowsTheSchematicUnderTheCluster) {
  std::vector<PlanReportEntry> report = SampleReport();
  report[0].schematic =
      PlanSchematic{"f00d", {"siderolabs/iscsi-tools", "siderolabs/qemu-guest-agent"}};
  report[1].schematic = PlanSchematic{"", {}};
  const std::string text = RenderPlanText(report);
  EXPECT_THAT(text, HasSubstr("prod: planned\n  Talos 1.11.6 / Kubernetes 1.34.1 → Talos 1.12.0 / "
                              "Kubernetes 1.35.0\n  schematic: f00d (siderolabs/iscsi-tools, "
                              "siderolabs/qemu-guest-agent)\n"));
  EXPECT_THAT(text, HasSubstr("  schematic: ID not known (no extensions)\n"));
  EXPECT_THAT(RenderPlanMarkdown(report),
              HasSubstr("Schematic: f00d (siderolabs/iscsi-tools, siderolabs/qemu-guest-agent)\n"));
  EXPECT_THAT(RenderPlanText({SampleReport()[0]}), ::testing::Not(HasSubstr("schematic")));
}

// A plan whose step gives w-1 (a GPU worker) its own schematic's installer.
std::vector<PlanReportEntry> GpuWorkerReport() {
  auto nodes = FiveNodes("1.11.6", "1.35.0");
  ClusterPlan plan = PlanCluster(GpuWorkerProfile(nodes), MakeObserved(nodes),
                                 SupportMatrix::BuiltIn(), ReleaseCatalog::BuiltIn());
  EXPECT_EQ(plan.status, PlanStatus::kPlanned) << plan.message;
  return {{"prod", plan, {}, std::nullopt, {}}};
}

TEST(PlanRenderTest, ANodesOwnImageIsShownBelowTheSteps) {
  EXPECT_THAT(RenderPlanText(GpuWorkerReport()),
              HasSubstr("     image of w-1: f.test/metal-installer/gpu:v1.12.0\n"));
  EXPECT_THAT(RenderPlanMarkdown(GpuWorkerReport()),
              HasSubstr(":v1.12.0`<br>w-1: `f.test/metal-installer/gpu:v1.12.0` |"));
}

// A plan upgrading only Kubernetes (Talos 1.14.0, Kubernetes 1.36.3 → 1.37.0) with where each
// node keeps its settings; w-1's kubelet is set twice, which the step's pre-check refuses.
PlanReportEntry KubernetesOnlyEntry() {
  auto nodes = FiveNodes("1.14.0", "1.36.3");
  ClusterProfile profile = MakeProfile(nodes, "1.14.0", "1.37.0");
  PlanReportEntry e{"prod",
                    PlanCluster(profile, MakeObserved(nodes), SupportMatrix::BuiltIn(),
                                ReleaseCatalog::BuiltIn()),
                    {},
                    std::nullopt,
                    {},
                    std::nullopt,
                    {{"cp-0", "documents", ""},
                     {"cp-1", "v1alpha1", ""},
                     {"w-0", "documents", ""},
                     {"w-1", "documents", "kubelet: set twice"}}};
  return e;
}

TEST(PlanRenderTest, AKubernetesStepShowsWhereEachNodeKeepsItsSettings) {
  const PlanReportEntry e = KubernetesOnlyEntry();
  ASSERT_EQ(e.plan->status, PlanStatus::kPlanned) << e.plan->message;
  ASSERT_TRUE(HasKubernetesStep(*e.plan));
  EXPECT_TRUE(KubernetesConfigRefused(e));
  EXPECT_THAT(RenderPlanText({e}), HasSubstr("     Kubernetes settings kept in:\n"
                                             "       documents: cp-0, w-0\n"
                                             "       v1alpha1: cp-1\n"
                                             "       w-1: pre-check refuses: kubelet: set twice\n"));
  const std::string md = RenderPlanMarkdown({e});
  EXPECT_THAT(md, HasSubstr("Kubernetes settings kept in:\n\n- documents: `cp-0`, `w-0`\n"
                            "- v1alpha1: `cp-1`\n\n"));
  EXPECT_THAT(md, HasSubstr("> **The Kubernetes step's pre-check refuses `w-1`:** kubelet: set "
                            "twice\n"));
}

TEST(PlanRenderTest, NothingAboutSettingsWhenTheNodesWereNotAsked) {
  PlanReportEntry e = KubernetesOnlyEntry();
  e.kubernetes_config.clear();
  EXPECT_FALSE(KubernetesConfigRefused(e));
  EXPECT_THAT(RenderPlanText({e}), ::testing::Not(HasSubstr("settings kept in")));
  EXPECT_THAT(RenderPlanMarkdown({e}), ::testing::Not(HasSubstr("settings kept in")));
}

}  // namespace
}  // namespace tr::core
