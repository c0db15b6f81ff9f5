#include "core/forecast_render.h"

#include <algorithm>

#include "core/duration.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

using Json = nlohmann::ordered_json;

// What a hazard does to the drain, in one word for a reader scanning the table.
const char* HazardVerb(HazardKind kind) {
  switch (kind) {
    case HazardKind::kBudget:
      return "blocks";
    case HazardKind::kNoRoom:
      return "stays Pending";
    case HazardKind::kUnmanaged:
      return "deleted";
    case HazardKind::kLocalData:
      return "data";
  }
  return "blocks";
}

const char* PolicyName(const DrainForecast& f) { return f.force ? "force" : "halt"; }

// What the drain policy does with the node: "drains", "halts before the reboot", ...
std::string Outcome(const DrainForecast& f, const NodeDrainForecast& node) {
  if (node.blocked == 0) return "drains";
  if (f.force) return fmt::format("force-deletes {} pod(s) at the timeout", node.blocked);
  return "waits the timeout, then halts before the reboot";
}

int Blocked(const DrainForecast& f) {
  int blocked = 0;
  for (const NodeDrainForecast& node : f.nodes) blocked += node.blocked;
  return blocked;
}

std::string Range(const std::optional<std::chrono::seconds>& low,
                  const std::optional<std::chrono::seconds>& high) {
  if (!low || !high) return "";
  if (*low == *high) return FormatDuration(*low);
  return FormatDuration(*low) + "–" + FormatDuration(*high);
}

// The advice lines: another order, force, the legacy steps, the rollout's duration.
std::vector<std::string> Notes(const DrainForecast& f) {
  std::vector<std::string> notes;
  const auto halts = std::find_if(f.nodes.begin(), f.nodes.end(),
                                  [](const NodeDrainForecast& n) { return n.blocked > 0; });
  if (!f.force && halts != f.nodes.end() && halts + 1 != f.nodes.end()) {
    notes.push_back(fmt::format(
        "With halt the rollout stops at {}; the nodes after it are played as if it had been "
        "forced, so that every blocker is named.",
        halts->node));
  }
  if (!f.better_order.empty()) notes.push_back("In another order: " + f.better_order + ".");
  if (const int blocked = Blocked(f); blocked > 0 && !f.force) {
    notes.push_back(fmt::format(
        "policy.drain.onTimeout: force would finish every drain, deleting {} pod(s) its budgets "
        "protect.",
        blocked));
  }
  for (const std::string& step : f.legacy_steps) {
    notes.push_back(step +
                    ": the legacy path; Talos drains each node itself inside its upgrade, with "
                    "the same budgets, and policy.drain does not apply.");
  }
  if (std::string range = Range(f.duration_low, f.duration_high); !range.empty()) {
    notes.push_back("Duration from earlier rollouts of this cluster: " + range + ".");
  }
  return notes;
}

std::vector<std::string> Clear(const DrainForecast& f) {
  std::vector<std::string> clear;
  for (const NodeDrainForecast& node : f.nodes) {
    if (node.hazards.empty()) clear.push_back(node.node);
  }
  return clear;
}

std::string Joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

Json DurationJson(const std::optional<std::chrono::seconds>& low,
                  const std::optional<std::chrono::seconds>& high) {
  if (!low || !high) return nullptr;
  return Json::array({low->count(), high->count()});
}

}  // namespace

std::string ForecastText(const DrainForecast& f, const std::string& indent) {
  if (!f.unavailable.empty()) return indent + "drain forecast: none: " + f.unavailable + "\n";
  if (f.nodes.empty() && f.legacy_steps.empty()) return "";
  std::string out = fmt::format("{}drain forecast (policy.drain.onTimeout: {}):\n", indent,
                                PolicyName(f));
  for (const NodeDrainForecast& node : f.nodes) {
    if (node.hazards.empty()) continue;
    std::string range = Range(node.duration_low, node.duration_high);
    out += fmt::format("{}  {}: {}{}\n", indent, node.node, Outcome(f, node),
                       range.empty() ? "" : " (took " + range + " before)");
    for (const DrainHazard& h : node.hazards) {
      out += fmt::format("{}    {} {}: {}\n", indent, HazardVerb(h.kind), h.pod, h.reason);
    }
  }
  if (std::vector<std::string> clear = Clear(f); !clear.empty()) {
    out += fmt::format("{}  nothing in the way: {}\n", indent, Joined(clear, ", "));
  }
  for (const std::string& note : Notes(f)) out += indent + "  " + note + "\n";
  return out;
}

std::string ForecastMarkdown(const DrainForecast& f) {
  std::string out = "#### Drain forecast\n\n";
  if (!f.unavailable.empty()) return out + "No forecast: " + f.unavailable + "\n\n";
  if (f.nodes.empty() && f.legacy_steps.empty()) return "";
  out += fmt::format(
      "Read from the cluster's Kubernetes API, drains played in the planned order with "
      "`policy.drain.onTimeout: {}`.\n\n",
      PolicyName(f));
  bool table = false;
  for (const NodeDrainForecast& node : f.nodes) {
    if (node.hazards.empty()) continue;
    if (!table) out += "| node | what the drain meets | then |\n|---|---|---|\n";
    table = true;
    std::vector<std::string> lines;
    for (const DrainHazard& h : node.hazards) {
      lines.push_back(fmt::format("**{}** `{}`: {}", HazardVerb(h.kind), h.pod, h.reason));
    }
    out += fmt::format("| `{}` | {} | {} |\n", node.node, Joined(lines, "<br>"), Outcome(f, node));
  }
  if (table) out += "\n";
  if (std::vector<std::string> clear = Clear(f); !clear.empty()) {
    out += "Nothing in the way on `" + Joined(clear, "`, `") + "`.\n\n";
  }
  const std::vector<std::string> notes = Notes(f);
  for (size_t i = 0; i < notes.size(); ++i) out += (i == 0 ? "> " : ">\n> ") + notes[i] + "\n";
  if (!notes.empty()) out += "\n";
  return out;
}

Json ForecastJson(const DrainForecast& f) {
  Json j;
  j["unavailable"] = f.unavailable.empty() ? Json(nullptr) : Json(f.unavailable);
  j["onTimeout"] = PolicyName(f);
  j["nodes"] = Json::array();
  for (const NodeDrainForecast& node : f.nodes) {
    Json hazards = Json::array();
    for (const DrainHazard& h : node.hazards) {
      hazards.push_back({{"kind", HazardKindName(h.kind)}, {"pod", h.pod}, {"reason", h.reason}});
    }
    j["nodes"].push_back({{"node", node.node},
                          {"blocked", node.blocked},
                          {"hazards", hazards},
                          {"durationSeconds", DurationJson(node.duration_low, node.duration_high)}});
  }
  j["betterOrder"] = f.better_order.empty() ? Json(nullptr) : Json(f.better_order);
  j["legacySteps"] = f.legacy_steps;
  j["durationSeconds"] = DurationJson(f.duration_low, f.duration_high);
  return j;
}

}  // namespace tr::core
