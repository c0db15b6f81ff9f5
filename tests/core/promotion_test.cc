#include "core/promotion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile_set.h"
#include "fmt/format.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using std::chrono::hours;
using std::chrono::seconds;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::IsEmpty;

std::string Profile(std::string_view name, std::string_view talos, std::string_view promotion) {
  return fmt::format(R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata: {{name: {0}}}
spec:
  endpoints: [10.0.0.11]
  credentials: {0}
  talos: {{version: {1}, image: ghcr.io/siderolabs/installer}}
  kubernetes: {{version: 1.34.1}}
  nodes:
    - {{name: cp-0, address: 10.0.0.11, role: controlplane}}
{2})",
                     name, talos, promotion);
}

SourceFile ChainFile(std::string_view name, std::string_view promotion) {
  return SourceFile{.path = fmt::format("clusters/{}.yaml", name),
                    .content = Profile(name, "1.12.0", promotion),
                    .oversized = false};
}

std::vector<std::string> Problems(const ProfileSet& set) {
  std::vector<std::string> out;
  for (const InvalidProfile& p : set.invalid) {
    for (const std::string& d : DiagnosticStrings(p.diagnostics)) out.push_back(d);
  }
  return out;
}

TEST(PromotionDecodeTest, ReadsAChain) {
  ProfileSet set = DecodeProfileSet({
      ChainFile("lab", ""),
      ChainFile("staging", "  promotion: {after: [lab], soak: 2s}\n"),
      ChainFile("prod", "  promotion:\n    after: [staging, lab]\n    soak: 24h\n"),
  });
  EXPECT_THAT(Problems(set), IsEmpty());
  ASSERT_EQ(set.profiles.size(), 3u);
  const ClusterProfile& prod = set.profiles[1];
  ASSERT_EQ(prod.name, "prod");
  ASSERT_TRUE(prod.promotion.has_value());
  ASSERT_EQ(prod.promotion->after.size(), 2u);
  EXPECT_EQ(prod.promotion->after[0].cluster, "staging");
  EXPECT_EQ(prod.promotion->soak, hours(24));
  EXPECT_EQ(set.profiles[2].promotion->soak, seconds(2));
}

TEST(PromotionDecodeTest, RefusesUnknownNamesAndCyclesWithFileAndLine) {
  ProfileSet set = DecodeProfileSet({
      ChainFile("lab", "  promotion: {after: [prod]}\n"),
      ChainFile("staging", "  promotion: {after: [lab, qa]}\n"),
      ChainFile("prod", "  promotion: {after: [staging]}\n"),
      ChainFile("solo", ""),
  });
  ASSERT_EQ(set.profiles.size(), 1u);
  EXPECT_EQ(set.profiles[0].name, "solo");
  EXPECT_THAT(
      Problems(set),
      ElementsAre("clusters/lab.yaml:11:23: spec.promotion.after[0]: promotion cycle: lab → prod "
                  "→ staging → lab; no cluster in it could ever start",
                  "clusters/prod.yaml:11:23: spec.promotion.after[0]: promotion cycle: prod → "
                  "staging → lab → prod; no cluster in it could ever start",
                  "clusters/staging.yaml:11:23: spec.promotion.after[0]: promotion cycle: "
                  "staging → lab → prod → staging; no cluster in it could ever start",
                  "clusters/staging.yaml:11:28: spec.promotion.after[1]: unknown cluster \"qa\": "
                  "no clusters/qa.yaml"));
}

TEST(PromotionDecodeTest, RefusesBadShapes) {
  ProfileSet set = DecodeProfileSet({
      ChainFile("a", "  promotion: {after: [], soak: 1d}\n"),
      ChainFile("b", "  promotion: {after: [a, a], wait: 1h}\n"),
      ChainFile("c", "  promotion: {after: [Bad_Name]}\n"),
      ChainFile("d", "  promotion: {after: [d]}\n"),
  });
  EXPECT_THAT(Problems(set),
              ElementsAre("clusters/a.yaml:11:22: spec.promotion.after: must name at least one "
                          "cluster",
                          HasSubstr("a.yaml:11:32: spec.promotion.soak: invalid duration \"1d\""),
                          "clusters/b.yaml:11:26: spec.promotion.after[1]: \"a\" is listed twice",
                          HasSubstr("b.yaml:11:30: spec.promotion.wait: unknown key \"wait\""),
                          HasSubstr("c.yaml:11:23: spec.promotion.after[0]: must be a DNS-1123"),
                          "clusters/d.yaml:11:23: spec.promotion.after[0]: promotion cycle: d → "
                          "d; no cluster in it could ever start"));
}

// The status an upstream cluster recorded: `phase`, on `talos`, Ready since `since`.
ClusterStatus Upstream(ClusterPhase phase, std::string talos, TimePoint since) {
  ClusterStatus s;
  s.phase = phase;
  s.talos.current = std::move(talos);
  s.kubernetes.current = "1.34.1";
  s.conditions.push_back({"Ready", phase == ClusterPhase::kReady, "Ready", "", since});
  return s;
}

struct PromotionWorld {
  ClusterProfile profile;
  ClusterPlan plan;
  PromotionWorld() {
    profile.name = "prod";
    profile.talos_version = *ParseTalosVersion("1.12.0");
    profile.promotion = Promotion{{{"staging", 0, 0}}, hours(24)};
    PlanStep step;
    step.type = StepType::kTalos;
    step.installer_image = "img:v1.12.0";
    plan.steps.push_back(step);
  }
};

TEST(PromotionTest, WaitsForVersionThenSoakThenGoes) {
  PromotionWorld w;
  const TimePoint t0 = TimePoint{} + hours(1000);
  std::map<std::string, ClusterStatus> statuses;
  PromotionVerdict v = EvaluatePromotion(w.profile, w.plan, {}, statuses, t0);
  EXPECT_FALSE(v.ready);
  EXPECT_EQ(v.message, "waiting for staging (no status recorded yet)");
  statuses["staging"] = Upstream(ClusterPhase::kUpgradingTalos, "1.11.6", t0);
  v = EvaluatePromotion(w.profile, w.plan, {}, statuses, t0);
  EXPECT_EQ(v.message, "waiting for staging (on Talos 1.11.6, needs 1.12.0)");
  EXPECT_FALSE(v.ready_at.has_value());
  statuses["staging"] = Upstream(ClusterPhase::kUpgradeFailed, "1.12.0", t0);
  EXPECT_EQ(EvaluatePromotion(w.profile, w.plan, {}, statuses, t0).message,
            "waiting for staging (UpgradeFailed)");
  statuses["staging"] = Upstream(ClusterPhase::kReady, "1.12.0", t0);
  v = EvaluatePromotion(w.profile, w.plan, {}, statuses, t0 + hours(3));
  EXPECT_FALSE(v.ready);
  EXPECT_EQ(v.message, "waiting for staging (Ready on 1.12.0 for 3h of 24h)");
  EXPECT_EQ(v.ready_at, t0 + hours(24));
  EXPECT_TRUE(EvaluatePromotion(w.profile, w.plan, {}, statuses, t0 + hours(24)).ready);
  statuses["staging"] = Upstream(ClusterPhase::kReady, "1.13.0", t0);  // newer is enough
  EXPECT_TRUE(EvaluatePromotion(w.profile, w.plan, {}, statuses, t0 + hours(25)).ready);
}

TEST(PromotionTest, ARolloutAlreadyBegunIsSeenThrough) {
  PromotionWorld w;
  std::map<std::string, ClusterStatus> statuses;
  RolloutMemory memory;
  memory.prepulled_image = "img:v1.12.0";
  EXPECT_TRUE(EvaluatePromotion(w.profile, w.plan, memory, statuses, TimePoint{}).ready);
  memory.prepulled_image = "img:v1.11.6";  // an earlier rollout's pull does not count
  EXPECT_FALSE(EvaluatePromotion(w.profile, w.plan, memory, statuses, TimePoint{}).ready);
  // Below 1.13 nothing is pre-pulled: a node already on the target says the rollout began.
  w.profile.nodes = {
      NodeSpec{.name = "cp-0", .address = "10.0.0.11", .role = NodeRole::kControlPlane},
      NodeSpec{.name = "w-0", .address = "10.0.0.21", .role = NodeRole::kWorker}};
  w.plan.steps.front().batches = {{"w-0"}, {"cp-0"}};
  EXPECT_FALSE(EvaluatePromotion(w.profile, w.plan, {}, statuses, TimePoint{}).ready);
  w.plan.steps.front().batches = {{"cp-0"}};  // w-0 is done
  EXPECT_TRUE(EvaluatePromotion(w.profile, w.plan, {}, statuses, TimePoint{}).ready);
  w.plan.steps.clear();  // nothing to start: nothing to wait for
  EXPECT_TRUE(EvaluatePromotion(w.profile, w.plan, memory, statuses, TimePoint{}).ready);
}

}  // namespace
}  // namespace tr::core
