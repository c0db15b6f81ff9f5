#include "core/plan_render.h"

#include "core/duration.h"
#include "core/gates.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

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

std::string StepTitle(const PlanStep& step) {
  return fmt::format("{} {} → {}", step.type == StepType::kTalos ? "Talos" : "Kubernetes",
                     step.from.ToString(), step.to.ToString());
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

void TextEntry(const PlanReportEntry& e, std::string& out) {
  out += fmt::format("{}: {}\n", e.cluster, Status(e));
  if (!e.plan) {
    for (const Diagnostic& d : e.diagnostics) out += "  " + d.ToString() + "\n";
    return;
  }
  const ClusterPlan& plan = *e.plan;
  out += "  " + CurrentText(plan) + "\n";
  if (!plan.message.empty()) out += "  " + plan.message + "\n";
  int n = 0;
  for (const PlanStep& step : plan.steps) {
    out += fmt::format("  {}. {}\n     nodes: {}\n", ++n, StepTitle(step), BatchesText(step));
    if (!step.installer_image.empty()) out += "     image: " + step.installer_image + "\n";
  }
  if (!plan.gates.empty()) out += "  gates:\n";
  for (const std::string& gate : plan.gates) out += "    - " + gate + "\n";
  if (plan.status == PlanStatus::kPlanned) {
    out += "  estimate: " + FormatDuration(plan.estimate) + "\n";
  }
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
  if (plan.status == PlanStatus::kBlocked) out += "> **Blocked:** " + plan.message + "\n\n";
  if (plan.status == PlanStatus::kUpToDate) out += plan.message + "\n\n";
  if (plan.paused) out += "> **Paused** by policy: nothing will be acted on.\n\n";
  if (!plan.steps.empty()) {
    out += "| # | step | nodes, in order | installer image |\n|---|---|---|---|\n";
    int n = 0;
    for (const PlanStep& step : plan.steps) {
      out += fmt::format("| {} | {} | {} | {} |\n", ++n, StepTitle(step), BatchesText(step),
                         step.installer_image.empty() ? "" : "`" + step.installer_image + "`");
    }
    out += "\n";
  }
  if (!plan.gates.empty()) {
    out += "<details><summary>Gates</summary>\n\n";
    for (const std::string& gate : plan.gates) out += "- " + gate + "\n";
    out += "\n</details>\n\n";
  }
  if (plan.status == PlanStatus::kPlanned) {
    out += "Estimated duration: " + FormatDuration(plan.estimate) + "\n\n";
  }
}

nlohmann::json VersionsJson(const std::optional<Version>& talos,
                            const std::optional<Version>& kubernetes) {
  return {{"talos", talos ? nlohmann::json(talos->ToString()) : nlohmann::json(nullptr)},
          {"kubernetes",
           kubernetes ? nlohmann::json(kubernetes->ToString()) : nlohmann::json(nullptr)}};
}

nlohmann::json JsonEntry(const PlanReportEntry& e) {
  nlohmann::json j = {{"name", e.cluster}, {"status", Status(e)}};
  if (!e.plan) {
    j["message"] = e.diagnostics.empty() ? "invalid profile" : e.diagnostics.front().ToString();
    j["diagnostics"] = nlohmann::json::array();
    for (const Diagnostic& d : e.diagnostics) j["diagnostics"].push_back(d.ToString());
    j["steps"] = nlohmann::json::array();
    return j;
  }
  const ClusterPlan& plan = *e.plan;
  j["message"] = plan.message;
  j["paused"] = plan.paused;
  j["current"] = VersionsJson(plan.talos_current, plan.kubernetes_current);
  j["target"] = VersionsJson(plan.talos_target, plan.kubernetes_target);
  j["steps"] = nlohmann::json::array();
  for (const PlanStep& step : plan.steps) {
    nlohmann::json s = {{"type", StepTypeName(step.type)},
                        {"from", step.from.ToString()},
                        {"to", step.to.ToString()},
                        {"nodes", step.Nodes()},
                        {"batches", step.batches}};
    if (!step.installer_image.empty()) s["image"] = step.installer_image;
    j["steps"].push_back(std::move(s));
  }
  j["gates"] = plan.gates;
  j["estimateSeconds"] = plan.estimate.count();
  return j;
}

}  // namespace

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

std::string RenderPlanJson(const std::vector<PlanReportEntry>& entries) {
  nlohmann::json clusters = nlohmann::json::array();
  for (const PlanReportEntry& e : entries) clusters.push_back(JsonEntry(e));
  return nlohmann::json{{"clusters", std::move(clusters)}}.dump(2) + "\n";
}

}  // namespace tr::core
