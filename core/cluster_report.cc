#include "core/cluster_report.h"

#include "core/api_version.h"
#include "core/forecast_render.h"
#include "core/timestamp.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tr::core {
namespace {

using Json = nlohmann::ordered_json;

Json TextOrNull(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

Json VersionOrNull(const std::optional<Version>& v) {
  return v ? Json(v->ToString()) : Json(nullptr);
}

// The core every cluster object shares, plan and status alike.
struct Core {
  std::string name;
  ClusterPhase phase = ClusterPhase::kReady;
  std::string message;
  bool paused = false;
  Json talos_from, talos_to, kubernetes_from, kubernetes_to;
  const std::vector<NodeStatus>* nodes = nullptr;
};

Json NodeJson(const NodeStatus& n) {
  return {{"name", n.name},
          {"role", n.role},
          {"talos", TextOrNull(n.talos)},
          {"kubelet", TextOrNull(n.kubelet)},
          {"ready", n.ready},
          {"reachable", n.reachable}};
}

Json CoreJson(const Core& c) {
  Json nodes = Json::array();
  if (c.nodes != nullptr) {
    for (const NodeStatus& n : *c.nodes) nodes.push_back(NodeJson(n));
  }
  return {{"name", c.name},
          {"phase", ClusterPhaseName(c.phase)},
          {"message", c.message},
          {"paused", c.paused},
          {"talos", {{"from", c.talos_from}, {"to", c.talos_to}}},
          {"kubernetes", {{"from", c.kubernetes_from}, {"to", c.kubernetes_to}}},
          {"nodes", std::move(nodes)}};
}

Json StepJson(const PlanStep& step, const StepOutlook* outlook) {
  Json s = {{"type", StepTypeName(step.type)},
            {"from", step.from.ToString()},
            {"to", step.to.ToString()},
            {"nodes", step.Nodes()},
            {"batches", step.batches}};
  if (!step.installer_image.empty()) s["image"] = step.installer_image;
  for (const auto& [node, own] : step.own_installers) s["nodeImages"][node] = own.image;
  s["daemon"] = StepRunName(outlook ? outlook->run : StepRun::kRuns);
  if (outlook && !outlook->reason.empty()) s["reason"] = outlook->reason;
  return s;
}

// `{"id", "extensions"}`, the ID null until a factory gave it; null without a schematic.
Json SchematicJson(const std::optional<PlanSchematic>& s) {
  if (!s) return nullptr;
  return {{"id", TextOrNull(s->id)}, {"extensions", s->extensions}};
}

// `[{"node", "shape", "problem"}]`, shape and problem null when there is none.
Json KubernetesConfigJson(const std::vector<NodeKubernetesConfig>& configs) {
  Json out = Json::array();
  for (const NodeKubernetesConfig& c : configs) {
    out.push_back({{"node", c.node}, {"shape", TextOrNull(c.shape)}, {"problem", TextOrNull(c.problem)}});
  }
  return out;
}

Json PlanEntryJson(const PlanReportEntry& e) {
  Core c{e.cluster, ClusterPhase::kBlocked, "", false, nullptr, nullptr, nullptr, nullptr,
         &e.nodes};
  if (!e.plan) {
    c.message = e.diagnostics.empty() ? "invalid profile" : e.diagnostics.front().ToString();
    Json j = CoreJson(c);
    j["plan"] = "invalid";
    j["next"] = c.message;
    j["steps"] = Json::array();
    j["gates"] = Json::array();
    j["estimateSeconds"] = 0;
    j["diagnostics"] = Json::array();
    for (const Diagnostic& d : e.diagnostics) j["diagnostics"].push_back(d.ToString());
    j["schematic"] = nullptr;
    return j;
  }
  const ClusterPlan& plan = *e.plan;
  c.phase = e.outlook                             ? e.outlook->phase
            : plan.status == PlanStatus::kBlocked ? ClusterPhase::kBlocked
                                                  : ClusterPhase::kReady;
  c.message = plan.message;
  c.paused = plan.paused;
  c.talos_from = VersionOrNull(plan.talos_current);
  c.talos_to = plan.talos_target.ToString();
  c.kubernetes_from = VersionOrNull(plan.kubernetes_current);
  c.kubernetes_to = plan.kubernetes_target.ToString();
  Json j = CoreJson(c);
  j["plan"] = PlanStatusName(plan.status);
  j["next"] = e.outlook ? e.outlook->next : plan.message;
  j["steps"] = Json::array();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const bool known = e.outlook && i < e.outlook->steps.size();
    j["steps"].push_back(StepJson(plan.steps[i], known ? &e.outlook->steps[i] : nullptr));
    if (plan.steps[i].type == StepType::kKubernetes && !e.kubernetes_config.empty()) {
      j["steps"].back()["kubernetesConfig"] = KubernetesConfigJson(e.kubernetes_config);
    }
  }
  j["gates"] = plan.gates;
  j["estimateSeconds"] = plan.estimate.count();
  j["diagnostics"] = Json::array();
  j["schematic"] = SchematicJson(e.schematic);
  if (e.drain_forecast) j["drainForecast"] = ForecastJson(*e.drain_forecast);
  return j;
}

void AddComponentDetail(const ComponentStatus& c, Json& into) {
  into["available"] = TextOrNull(c.available);
  into["status"] = ComponentStateName(c.state);
  into["progress"] = TextOrNull(c.progress);
  into["message"] = c.message;
}

std::string ProgressOf(const ClusterStatus& s) {
  for (const ComponentStatus* c : {&s.talos, &s.kubernetes}) {
    if (c->state == ComponentState::kInProgress && !c->progress.empty()) return c->progress;
  }
  return "";
}

// The nodes in flight, the failure that halts the cluster and the history, newest last.
void AddRolloutDetail(const ClusterStatus& s, Json& j) {
  j["inFlight"] = Json::array();
  for (const OperationInFlight& op : s.rollout.in_flight) {
    j["inFlight"].push_back({{"node", op.node},
                             {"target", op.target.ToString()},
                             {"image", op.image},
                             {"phase", OperationPhaseName(op.phase)},
                             {"started", FormatTimestamp(op.started)},
                             {"deadline", FormatTimestamp(op.deadline)}});
  }
  j["failure"] = nullptr;
  if (const std::optional<RolloutFailure>& f = s.rollout.failure) {
    j["failure"] = {{"node", TextOrNull(f->node)},
                    {"talosTarget", f->talos_target.ToString()},
                    {"message", f->message},
                    {"at", FormatTimestamp(f->at)},
                    {"retry", TextOrNull(f->retry)}};
  }
  j["history"] = Json::array();
  for (const HistoryEntry& h : s.history) {
    j["history"].push_back({{"at", FormatTimestamp(h.at)}, {"event", h.event}});
  }
}

Json StatusJson(const ClusterStatus& s) {
  Core c{s.cluster,
         s.phase,
         s.message,
         s.phase == ClusterPhase::kPaused,
         TextOrNull(s.talos.current),
         TextOrNull(s.talos.target),
         TextOrNull(s.kubernetes.current),
         TextOrNull(s.kubernetes.target),
         &s.nodes};
  Json j = CoreJson(c);
  AddComponentDetail(s.talos, j["talos"]);
  AddComponentDetail(s.kubernetes, j["kubernetes"]);
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const NodeStatus& node = s.nodes[i];
    Json& n = j["nodes"][i];
    n["schematic"] = TextOrNull(node.schematic);
    n["bootId"] = TextOrNull(node.boot_id);
    n["bootSeen"] = node.boot_seen ? Json(FormatTimestamp(*node.boot_seen)) : nullptr;
    n["phase"] = nullptr;
    for (const OperationInFlight& op : s.rollout.in_flight) {
      if (op.node == node.name) n["phase"] = OperationPhaseName(op.phase);
    }
    n["lastSeen"] = node.last_seen ? Json(FormatTimestamp(*node.last_seen)) : nullptr;
    n["lastOperation"] = TextOrNull(node.last_operation);
    n["lastUpgradeSeconds"] =
        node.last_upgrade_duration ? Json(node.last_upgrade_duration->count()) : nullptr;
  }
  j["updated"] = FormatTimestamp(s.updated);
  j["revision"] = TextOrNull(s.desired_commit_applied.empty() ? s.desired_commit_attempted
                                                              : s.desired_commit_applied);
  j["progress"] = TextOrNull(ProgressOf(s));
  // Kubernetes' condition shape, as the status file writes it.
  j["conditions"] = Json::array();
  for (const Condition& cond : s.conditions) {
    j["conditions"].push_back({{"type", cond.type},
                               {"status", cond.status ? "True" : "False"},
                               {"reason", cond.reason},
                               {"message", cond.message},
                               {"lastTransitionTime", FormatTimestamp(cond.last_transition)}});
  }
  AddRolloutDetail(s, j);
  j["proposal"] = nullptr;
  if (s.proposal) {
    j["proposal"] = {{"branch", s.proposal->branch},
                     {"talos", TextOrNull(s.proposal->talos)},
                     {"kubernetes", TextOrNull(s.proposal->kubernetes)},
                     {"pullRequest", s.proposal->pull_request > 0
                                         ? Json(s.proposal->pull_request)
                                         : Json(nullptr)},
                     {"url", TextOrNull(s.proposal->url)}};
  }
  j["healthChecks"] = Json::array();
  for (const GateResult& r : s.gates.results) {
    j["healthChecks"].push_back({{"name", r.name},
                                 {"healthy", r.healthy},
                                 {"message", r.message},
                                 {"checked", FormatTimestamp(r.checked)}});
  }
  return j;
}

bool Inline(const Json& v) { return !v.is_structured() || v.empty(); }

std::string Scalar(const Json& v) {
  if (v.is_object()) return "{}";
  if (v.is_array()) return "[]";
  return v.dump();  // a JSON string is a valid YAML double-quoted scalar
}

// The same document as YAML, block style; strings double-quoted so no value changes type.
void EmitYaml(const Json& v, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (v.is_object()) {
    for (const auto& [key, value] : v.items()) {
      out += pad + key + ":";
      if (Inline(value)) {
        out += " " + Scalar(value) + "\n";
      } else {
        out += "\n";
        EmitYaml(value, indent + 2, out);
      }
    }
    return;
  }
  for (const Json& item : v) {
    if (Inline(item)) {
      out += pad + "- " + Scalar(item) + "\n";
      continue;
    }
    std::string nested;
    EmitYaml(item, indent + 2, nested);
    out += pad + "- " + nested.substr(static_cast<size_t>(indent) + 2);
  }
}

// Every report says what it is and in which version of its shape: a script reading it can
// check both, and a change of shape is a new version in CHANGELOG.md.
std::string Render(const char* kind, Json clusters, ReportFormat format) {
  Json doc = {{"apiVersion", std::string(kApiVersion)},
              {"kind", kind},
              {"clusters", std::move(clusters)}};
  if (format == ReportFormat::kJson) return doc.dump(2) + "\n";
  std::string out;
  EmitYaml(doc, 0, out);
  return out;
}

std::string Cell(std::string text) {
  for (char& ch : text) {
    if (ch == '|' || ch == '\n') ch = ' ';
  }
  return text;
}

std::string VersionCell(const ComponentStatus& c) {
  if (c.current == c.target || c.target.empty()) return c.current.empty() ? "-" : c.current;
  return fmt::format("{} → {}", c.current.empty() ? "?" : c.current, c.target);
}

}  // namespace

std::string RenderPlanReport(const std::vector<PlanReportEntry>& entries, ReportFormat format) {
  Json clusters = Json::array();
  for (const PlanReportEntry& e : entries) clusters.push_back(PlanEntryJson(e));
  return Render("PlanReport", std::move(clusters), format);
}

std::string RenderStatusReport(const std::vector<ClusterStatus>& statuses, ReportFormat format) {
  Json clusters = Json::array();
  for (const ClusterStatus& s : statuses) clusters.push_back(StatusJson(s));
  return Render("StatusReport", std::move(clusters), format);
}

std::string RenderStatusMarkdown(const std::vector<ClusterStatus>& statuses) {
  std::string out =
      "| cluster | phase | Talos | Kubernetes | progress | updated | message |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const ClusterStatus& s : statuses) {
    const std::string progress = ProgressOf(s);
    out +=
        fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", s.cluster,
                    ClusterPhaseName(s.phase), VersionCell(s.talos), VersionCell(s.kubernetes),
                    progress.empty() ? "-" : progress, FormatTimestamp(s.updated), Cell(s.message));
  }
  return out;
}

}  // namespace tr::core
