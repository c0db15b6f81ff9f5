#include "core/plan_render.h"

#include <algorithm>

#include "core/duration.h"
#include "core/forecast_render.h"
#include "core/gates.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::string BatchesText(const PlanStep& step) {
  std::vector<std::string> batches;
  for (const auto& batch : step.batches) batches.push_back(Join(batch, " + "));
  return Join(batches, " → ");
}

std::string Status(const PlanReportEntry& e) {
  return e.plan ? PlanStatusName(e.plan->status) : "invalid";
}

std::string CurrentText(const ClusterPlan& plan) {
  return fmt::format("Talos {} / Kubernetes {} → Talos {} / Kubernetes {}",
                     plan.talos_current ? plan.talos_current->ToString() : "?",
                     plan.kubernetes_current ? plan.kubernetes_current->ToString() : "?",
                     plan.talos_target.ToString(), plan.kubernetes_target.ToString());
}

// "waits: …" / "will not run it: …" (what the daemon does) for a step that does not simply run;
// empty when it does (or the outlook was not worked out).
std::string StepMark(const PlanReportEntry& e, size_t index) {
  if (!e.outlook || index >= e.outlook->steps.size()) return "";
  const StepOutlook& o = e.outlook->steps[index];
  switch (o.run) {
    case StepRun::kRuns:
      return "";
    case StepRun::kWaits:
      return "waits: " + o.reason;
    case StepRun::kNotRun:
      return "will not run it: " + o.reason;
  }
  return "";
}

std::string NextText(const PlanOutlook& o) {
  const std::string_view next = o.next;
  return fmt::format("{} ({})", next.starts_with("next: ") ? next.substr(6) : next,
                     ClusterPhaseName(o.phase));
}

// "<id> (siderolabs/iscsi-tools, …)"; the ID is unknown until a factory gave it.
std::string SchematicText(const PlanSchematic& s) {
  const std::string id = s.id.empty() ? "ID not known" : s.id;
  if (s.extensions.empty()) return id + " (no extensions)";
  return id + " (" + Join(s.extensions, ", ") + ")";
}

// The nodes by where they keep their Kubernetes settings, in first-seen order of the shapes:
// {"documents", {"cp-1", "cp-2"}}, ...; the nodes with a problem are left out.
std::vector<std::pair<std::string, std::vector<std::string>>> NodesByShape(
    const std::vector<NodeKubernetesConfig>& configs) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const NodeKubernetesConfig& c : configs) {
    if (!c.problem.empty()) continue;
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& g) { return g.first == c.shape; });
    if (group == groups.end()) group = groups.insert(groups.end(), {c.shape, {}});
    group->second.push_back(c.node);
  }
  return groups;
}

void TextKubernetesConfig(const PlanReportEntry& e, std::string& out) {
  if (e.kubernetes_config.empty()) return;
  out += "     Kubernetes settings kept in:\n";
  for (const auto& [shape, nodes] : NodesByShape(e.kubernetes_config)) {
    out += fmt::format("       {}: {}\n", shape, Join(nodes, ", "));
  }
  for (const NodeKubernetesConfig& c : e.kubernetes_config) {
    if (!c.problem.empty()) out += fmt::format("       {}: pre-check refuses: {}\n", c.node, c.problem);
  }
}

void MarkdownKubernetesConfig(const PlanReportEntry& e, std::string& out) {
  if (e.kubernetes_config.empty()) return;
  out += "Kubernetes settings kept in:\n\n";
  for (const auto& [shape, nodes] : NodesByShape(e.kubernetes_config)) {
    out += "- " + shape + ": `" + Join(nodes, "`, `") + "`\n";
  }
  out += "\n";
  for (const NodeKubernetesConfig& c : e.kubernetes_config) {
    if (c.problem.empty()) continue;
    out += fmt::format("> **The Kubernetes step's pre-check refuses `{}`:** {}\n\n", c.node,
                       c.problem);
  }
}

bool ShowsNext(const PlanReportEntry& e) {
  return e.outlook && (e.plan->status == PlanStatus::kPlanned || FollowsNodesInFlight(e));
}

void TextEntry(const PlanReportEntry& e, std::string& out) {
  out += fmt::format("{}: {}\n", e.cluster, Status(e));
  if (!e.plan) {
    for (const Diagnostic& d : e.diagnostics) out += "  " + d.ToString() + "\n";
    return;
  }
  const ClusterPlan& plan = *e.plan;
  out += "  " + CurrentText(plan) + "\n";
  if (e.schematic) out += "  schematic: " + SchematicText(*e.schematic) + "\n";
  if (!plan.message.empty()) out += "  " + plan.message + "\n";
  if (ShowsNext(e)) {
    out += "  next: " + NextText(*e.outlook) + "\n";
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    out += fmt::format("  {}. {}\n     nodes: {}\n", i + 1, StepTitle(step), BatchesText(step));
    if (!step.installer_image.empty()) out += "     image: " + step.installer_image + "\n";
    for (const auto& [node, own] : step.own_installers) {
      out += fmt::format("     image of {}: {}\n", node, own.image);
    }
    if (std::string mark = StepMark(e, i); !mark.empty()) out += "     daemon " + mark + "\n";
    if (step.type == StepType::kKubernetes) TextKubernetesConfig(e, out);
  }
  if (e.drain_forecast) out += ForecastText(*e.drain_forecast, "  ");
  if (!plan.gates.empty()) out += "  gates:\n";
  for (const std::string& gate : plan.gates) out += "    - " + gate + "\n";
  if (plan.status == PlanStatus::kPlanned) {
    out += "  estimate: " + FormatDuration(plan.estimate) + "\n";
  }
}

// The step's installer, then each node's own: "`img`<br>gpu-0: `img2`".
std::string ImagesCell(const PlanStep& step) {
  std::string cell = step.installer_image.empty() ? "" : "`" + step.installer_image + "`";
  for (const auto& [node, own] : step.own_installers) {
    cell += fmt::format("<br>{}: `{}`", node, own.image);
  }
  return cell;
}

void MarkdownEntry(const PlanReportEntry& e, std::string& out) {
  out += fmt::format("### `{}`: {}\n\n", e.cluster, Status(e));
  if (!e.plan) {
    out += "The profile is invalid:\n\n";
    for (const Diagnostic& d : e.diagnostics) out += "- `" + d.ToString() + "`\n";
    out += "\n";
    return;
  }
  const ClusterPlan& plan = *e.plan;
  out += CurrentText(plan) + "\n\n";
  if (e.schematic) out += "Schematic: " + SchematicText(*e.schematic) + "\n\n";
  if (plan.status == PlanStatus::kBlocked) out += "> **Blocked:** " + plan.message + "\n\n";
  if (plan.status == PlanStatus::kUpToDate) out += plan.message + "\n\n";
  if (plan.paused) out += "> **Paused** by policy: nothing will be acted on.\n\n";
  if (ShowsNext(e)) {
    out += "Next: " + NextText(*e.outlook) + "\n\n";
  }
  if (!plan.steps.empty()) {
    out += "| # | step | nodes, in order | installer image | daemon |\n|---|---|---|---|---|\n";
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const PlanStep& step = plan.steps[i];
      std::string mark = StepMark(e, i);
      out += fmt::format("| {} | {} | {} | {} | {} |\n", i + 1, StepTitle(step), BatchesText(step),
                         ImagesCell(step), mark.empty() ? "runs" : mark);
    }
    out += "\n";
    if (HasKubernetesStep(plan)) MarkdownKubernetesConfig(e, out);
  }
  if (e.drain_forecast) out += ForecastMarkdown(*e.drain_forecast);
  if (!plan.gates.empty()) {
    out += "<details><summary>Gates</summary>\n\n";
    for (const std::string& gate : plan.gates) out += "- " + gate + "\n";
    out += "\n</details>\n\n";
  }
  if (plan.status == PlanStatus::kPlanned) {
    out += "Estimated duration: " + FormatDuration(plan.estimate) + "\n\n";
  }
}

}  // namespace

bool HasKubernetesStep(const ClusterPlan& plan) {
  return std::any_of(plan.steps.begin(), plan.steps.end(),
                     [](const PlanStep& s) { return s.type == StepType::kKubernetes; });
}

bool KubernetesConfigRefused(const PlanReportEntry& e) {
  return std::any_of(e.kubernetes_config.begin(), e.kubernetes_config.end(),
                     [](const NodeKubernetesConfig& c) { return !c.problem.empty(); });
}

bool FollowsNodesInFlight(const PlanReportEntry& e) {
  return e.plan && e.plan->status == PlanStatus::kBlocked && e.outlook &&
         e.outlook->phase == ClusterPhase::kUpgradingTalos;
}

std::string RenderPlanText(const std::vector<PlanReportEntry>& entries) {
  std::string out;
  for (const PlanReportEntry& e : entries) {
    if (!out.empty()) out += "\n";
    TextEntry(e, out);
  }
  return out;
}

std::string RenderPlanMarkdown(const std::vector<PlanReportEntry>& entries) {
  std::string out;
  for (const PlanReportEntry& e : entries) MarkdownEntry(e, out);
  return out;
}

}  // namespace tr::core
