// The one machine-readable shape of `plan` and `status`: the same core per cluster, the YAML the
// same document as the JSON.
#include "core/cluster_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "core/status_yaml.h"
#include "core/timestamp.h"
#include "nlohmann/json.hpp"
#include "tests/support/fleet_fixtures.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;
using ::testing::HasSubstr;

std::vector<PlanReportEntry> SamplePlan() {
  auto nodes = FiveNodes("1.11.6", "1.34.1");
  ClusterProfile profile = MakeProfile(nodes, "1.12.0", "1.35.0");
  ObservedCluster observed = MakeObserved(nodes);
  ClusterPlan planned =
      PlanCluster(profile, observed, SupportMatrix::BuiltIn(), ReleaseCatalog::BuiltIn());
  OutlookInput in{profile, planned,      observed, {},    {},
                  {},      std::nullopt, false,    false, *ParseTimestamp("2026-11-23T10:00:00Z")};
  std::vector<NodeStatus> listed;
  for (const NodeSpec& n : profile.nodes) {
    NodeStatus s;
    s.name = n.name;
    s.role = NodeRoleName(n.role);
    s.talos = "1.11.6";
    s.kubelet = "1.34.1";
    s.ready = true;
    listed.push_back(s);
  }
  Diagnostic bad{"clusters/broken.yaml", 4, 7, "spec.nodes[0].role",
                 "must be controlplane or worker"};
  const PlanSchematic schematic{std::string(64, 'a'), {"siderolabs/iscsi-tools"}};
  return {{"prod", planned, {}, OutlookOf(in), listed, schematic},
          {"broken", std::nullopt, {bad}, std::nullopt, {}}};
}

ClusterStatus SampleStatus() {
  ClusterStatus s;
  s.cluster = "prod";
  s.phase = ClusterPhase::kUpgradingTalos;
  s.message = "upgrading w-1 (2/5) to Talos 1.12.0";
  s.updated = *ParseTimestamp("2026-11-23T10:00:00Z");
  s.talos = {"1.11.6", "1.12.0", "1.13.9", ComponentState::kInProgress, "", "2/5"};
  s.kubernetes = {"1.34.1", "1.35.0", "1.36.3", ComponentState::kIdle, "", ""};
  s.nodes = {{"w-0", "worker", "1.12.0", "1.34.1", true, true, std::nullopt, "upgraded", {}}};
  s.gates.results = {{"ingress", false, "HTTP 503, expected 200", s.updated}};
  return s;
}

// The JSON type of every key of `j`, recursing into objects (and the first element of arrays).
std::map<std::string, nlohmann::json::value_t> Shape(const nlohmann::json& j,
                                                     const std::string& prefix = "") {
  std::map<std::string, nlohmann::json::value_t> shape;
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix + key;
    shape[path] = value.type();
    if (value.is_object()) shape.merge(Shape(value, path + "."));
    if (value.is_array() && !value.empty() && value[0].is_object()) {
      shape.merge(Shape(value[0], path + "[]."));
    }
  }
  return shape;
}

TEST(ClusterReportTest, PlanAndStatusShareOneCore) {
  const nlohmann::json plan =
      nlohmann::json::parse(RenderPlanReport(SamplePlan(), ReportFormat::kJson));
  const nlohmann::json status =
      nlohmann::json::parse(RenderStatusReport({SampleStatus()}, ReportFormat::kJson));
  auto plan_shape = Shape(plan["clusters"][0]);
  auto status_shape = Shape(status["clusters"][0]);
  for (const char* key :
       {"name", "phase", "message", "paused", "talos", "talos.from", "talos.to", "kubernetes",
        "kubernetes.from", "kubernetes.to", "nodes", "nodes[].name", "nodes[].role",
        "nodes[].talos", "nodes[].kubelet", "nodes[].ready", "nodes[].reachable"}) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(plan_shape.contains(key));
    ASSERT_TRUE(status_shape.contains(key));
    EXPECT_EQ(plan_shape[key], status_shape[key]);
  }
  const nlohmann::json& p = plan["clusters"][0];
  EXPECT_EQ(p["phase"], "UpgradingTalos");  // the daemon would start w-0 (no pre-pull below 1.13)
  EXPECT_EQ(p["plan"], "planned");
  EXPECT_EQ(p["talos"], (nlohmann::json{{"from", "1.11.6"}, {"to", "1.12.0"}}));
  EXPECT_EQ(p["steps"][0]["daemon"], "runs");
  EXPECT_EQ(p["steps"][1]["daemon"], "not-run");  // Kubernetes steps are off in this outlook
  const nlohmann::json& s = status["clusters"][0];
  EXPECT_EQ(s["talos"]["from"], "1.11.6");
  EXPECT_EQ(s["talos"]["progress"], "2/5");
  EXPECT_EQ(s["progress"], "2/5");
  EXPECT_EQ(s["healthChecks"][0]["message"], "HTTP 503, expected 200");
  const nlohmann::json& broken = plan["clusters"][1];
  EXPECT_EQ(broken["plan"], "invalid");
  EXPECT_EQ(broken["phase"], "Blocked");  // what the daemon records for an invalid profile
  EXPECT_EQ(broken["message"],
            "clusters/broken.yaml:4:7: spec.nodes[0].role: must be controlplane or worker");
}

// YAML -> JSON, strings staying strings (every scalar of the report is quoted or a bool/number).
nlohmann::json FromYaml(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& kv : node) j[kv.first.as<std::string>()] = FromYaml(kv.second);
    return j;
  }
  if (node.IsSequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& item : node) j.push_back(FromYaml(item));
    return j;
  }
  if (node.IsNull()) return nullptr;
  if (node.Tag() == "!") return node.as<std::string>();  // a quoted scalar
  const std::string text = node.as<std::string>();
  if (text == "true" || text == "false") return text == "true";
  if (text == "[]") return nlohmann::json::array();
  if (text == "{}") return nlohmann::json::object();
  return std::stoll(text);
}

TEST(ClusterReportTest, YamlIsTheSameDocumentAsJson) {
  for (const auto& [json, yaml] :
       {std::pair{RenderPlanReport(SamplePlan(), ReportFormat::kJson),
                  RenderPlanReport(SamplePlan(), ReportFormat::kYaml)},
        std::pair{RenderStatusReport({SampleStatus()}, ReportFormat::kJson),
                  RenderStatusReport({SampleStatus()}, ReportFormat::kYaml)}}) {
    EXPECT_EQ(FromYaml(YAML::Load(yaml)), nlohmann::json::parse(json)) << yaml;
  }
}

TEST(ClusterReportTest, StatusMarkdownIsATable) {
  const std::string md = RenderStatusMarkdown({SampleStatus()});
  EXPECT_THAT(md, HasSubstr("| cluster | phase | Talos | Kubernetes | progress |"));
  EXPECT_THAT(md,
              HasSubstr("| `prod` | UpgradingTalos | 1.11.6 → 1.12.0 | 1.34.1 → 1.35.0 | 2/5 |"));
}

// The shape of a report as "path: type" lines, one per key.
std::string ShapeText(const std::string& rendered) {
  std::string out;
  for (const auto& [path, type] : Shape(nlohmann::json::parse(rendered))) {
    out += path + ": " + nlohmann::json(type).type_name() + "\n";
  }
  return out;
}

// What scripts read, pinned: a change here is a change of the report's shape, which needs a new
// apiVersion or at least an entry in CHANGELOG.md (the `status` field of `plan -o json` once
// became `plan` without a word, and a script reading it broke).
TEST(ClusterReportTest, ThePlanReportsShapeIsPinned) {
  EXPECT_EQ(ShapeText(RenderPlanReport(SamplePlan(), ReportFormat::kJson)), R"(apiVersion: string
clusters: array
clusters[].diagnostics: array
clusters[].estimateSeconds: number
clusters[].gates: array
clusters[].kubernetes: object
clusters[].kubernetes.from: string
clusters[].kubernetes.to: string
clusters[].message: string
clusters[].name: string
clusters[].next: string
clusters[].nodes: array
clusters[].nodes[].kubelet: string
clusters[].nodes[].name: string
clusters[].nodes[].reachable: boolean
clusters[].nodes[].ready: boolean
clusters[].nodes[].role: string
clusters[].nodes[].talos: string
clusters[].paused: boolean
clusters[].phase: string
clusters[].plan: string
clusters[].schematic: object
clusters[].schematic.extensions: array
clusters[].schematic.id: string
clusters[].steps: array
clusters[].steps[].batches: array
clusters[].steps[].daemon: string
clusters[].steps[].from: string
clusters[].steps[].image: string
clusters[].steps[].nodes: array
clusters[].steps[].to: string
clusters[].steps[].type: string
clusters[].talos: object
clusters[].talos.from: string
clusters[].talos.to: string
kind: string
)");
}

// A node with its own schematic: its installer under the step's `nodeImages`, which other
// plans leave out.
TEST(ClusterReportTest, AStepNamesTheImagesOfNodesWithTheirOwnSchematic) {
  auto nodes = FiveNodes("1.11.6", "1.35.0");
  ClusterPlan plan = PlanCluster(GpuWorkerProfile(nodes), MakeObserved(nodes),
                                 SupportMatrix::BuiltIn(), ReleaseCatalog::BuiltIn());
  ASSERT_EQ(plan.status, PlanStatus::kPlanned) << plan.message;
  const nlohmann::json j = nlohmann::json::parse(
      RenderPlanReport({{"prod", plan, {}, std::nullopt, {}}}, ReportFormat::kJson));
  const nlohmann::json& step = j["clusters"][0]["steps"][0];
  EXPECT_EQ(step["nodeImages"], nlohmann::json({{"w-1", "f.test/metal-installer/gpu:v1.12.0"}}));
  const nlohmann::json plain =
      nlohmann::json::parse(RenderPlanReport(SamplePlan(), ReportFormat::kJson));
  EXPECT_FALSE(plain["clusters"][0]["steps"][0].contains("nodeImages"));
}

TEST(ClusterReportTest, TheStatusReportsShapeIsPinned) {
  // Every field that may be null is set, so that its type is pinned too.
  ClusterStatus full = SampleStatus();
  full.kubernetes.progress = "1/5";
  full.nodes.front().last_seen = full.updated;
  full.desired_commit_applied = "0123abcd";
  full.nodes.front().schematic = std::string(64, 'a');
  full.nodes.front().boot_id = "b1";
  full.nodes.front().boot_seen = full.updated;
  full.nodes.front().last_upgrade_duration = std::chrono::seconds(372);
  full.conditions = {{"TalosUpgrade", true, "InProgress", "upgrading", full.updated}};
  full.rollout.in_flight = {{"w-0", *ParseTalosVersion("1.12.0"), "img:v1.12.0", true, "b1", "",
                             OperationPhase::kDrained, full.updated, full.updated, ""}};
  full.rollout.failure =
      RolloutFailure{"w-1", *ParseTalosVersion("1.12.0"), "boom", full.updated, "", "t1"};
  full.history = {{full.updated, "upgrading w-0"}};
  full.proposal = ProposalRef{.branch = "talos-reconciler/update/lab",
                              .talos = "1.12.3",
                              .kubernetes = "1.34.3",
                              .pull_request = 12,
                              .url = "https://github.example/acme/fleet/pull/12"};
  EXPECT_EQ(ShapeText(RenderStatusReport({full}, ReportFormat::kJson)), R"(apiVersion: string
clusters: array
clusters[].conditions: array
clusters[].conditions[].lastTransitionTime: string
clusters[].conditions[].message: string
clusters[].conditions[].reason: string
clusters[].conditions[].status: string
clusters[].conditions[].type: string
clusters[].failure: object
clusters[].failure.at: string
clusters[].failure.message: string
clusters[].failure.node: string
clusters[].failure.retry: string
clusters[].failure.talosTarget: string
clusters[].healthChecks: array
clusters[].healthChecks[].checked: string
clusters[].healthChecks[].healthy: boolean
clusters[].healthChecks[].message: string
clusters[].healthChecks[].name: string
clusters[].history: array
clusters[].history[].at: string
clusters[].history[].event: string
clusters[].inFlight: array
clusters[].inFlight[].deadline: string
clusters[].inFlight[].image: string
clusters[].inFlight[].node: string
clusters[].inFlight[].phase: string
clusters[].inFlight[].started: string
clusters[].inFlight[].target: string
clusters[].kubernetes: object
clusters[].kubernetes.available: string
clusters[].kubernetes.from: string
clusters[].kubernetes.message: string
clusters[].kubernetes.progress: string
clusters[].kubernetes.status: string
clusters[].kubernetes.to: string
clusters[].message: string
clusters[].name: string
clusters[].nodes: array
clusters[].nodes[].bootId: string
clusters[].nodes[].bootSeen: string
clusters[].nodes[].kubelet: string
clusters[].nodes[].lastOperation: string
clusters[].nodes[].lastSeen: string
clusters[].nodes[].lastUpgradeSeconds: number
clusters[].nodes[].name: string
clusters[].nodes[].phase: string
clusters[].nodes[].reachable: boolean
clusters[].nodes[].ready: boolean
clusters[].nodes[].role: string
clusters[].nodes[].schematic: string
clusters[].nodes[].talos: string
clusters[].paused: boolean
clusters[].phase: string
clusters[].progress: string
clusters[].proposal: object
clusters[].proposal.branch: string
clusters[].proposal.kubernetes: string
clusters[].proposal.pullRequest: number
clusters[].proposal.talos: string
clusters[].proposal.url: string
clusters[].revision: string
clusters[].talos: object
clusters[].talos.available: string
clusters[].talos.from: string
clusters[].talos.message: string
clusters[].talos.progress: string
clusters[].talos.status: string
clusters[].talos.to: string
clusters[].updated: string
kind: string
)");
}

// One condition shape everywhere: `status -o json` writes a condition with the keys and values
// the status file writes (Kubernetes' shape), so a script can read either.
TEST(ClusterReportTest, ConditionsHaveTheStatusFilesShape) {
  ClusterStatus s = SampleStatus();
  s.conditions = {{"Ready", false, "Failed", "w-1 failed", s.updated}};
  const nlohmann::json report = nlohmann::json::parse(RenderStatusReport({s}, ReportFormat::kJson));
  const YAML::Node file = YAML::Load(RenderStatusYaml(s));
  const YAML::Node written = file["conditions"][0];
  const nlohmann::json& shown = report["clusters"][0]["conditions"][0];
  ASSERT_EQ(written.size(), shown.size());
  for (const auto& kv : written) {
    const std::string key = kv.first.as<std::string>();
    SCOPED_TRACE(key);
    ASSERT_TRUE(shown.contains(key));
    EXPECT_EQ(shown[key].get<std::string>(), kv.second.as<std::string>());
  }
  EXPECT_EQ(shown["status"], "False");
}

}  // namespace
}  // namespace tr::core
