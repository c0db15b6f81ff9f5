// Renders plans for people: plain text for the terminal and Markdown for pull-request comments.
// JSON and YAML, the contract other tools read, are cluster_report.h's.
//
// Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/disruption_types.h"
#include "core/plan_outlook.h"
#include "core/planner.h"
#include "core/status.h"

namespace tr::core {

// A profile's spec.talos.schematic as a plan shows it.
struct PlanSchematic {
  std::string id;                       // the ID an Image Factory gave; empty: none has
  std::vector<std::string> extensions;  // its official extensions, sorted
};

// One cluster's entry in a report: its plan, or why its profile is invalid.
// Where a node's configuration keeps its Kubernetes settings, shown with a Kubernetes step
// when the nodes were asked (a live plan): `shape` is "v1alpha1", "documents" or "mixed (…)";
// `problem`, when set, is why the upgrade's pre-check would refuse the node.
struct NodeKubernetesConfig {
  std::string node;
  std::string shape;
  std::string problem;
};

struct PlanReportEntry {
  std::string cluster;
  std::optional<ClusterPlan> plan;  // unset when the profile is invalid
  Diagnostics diagnostics;          // the invalid profile's problems
  // What the daemon would do with the plan (plan_outlook.h); unset when not worked out.
  std::optional<PlanOutlook> outlook;
  std::vector<NodeStatus> nodes;             // the profile's nodes as observed
  std::optional<PlanSchematic> schematic{};  // unset when the profile names none
  // Per reachable node, when the plan has a Kubernetes step and the nodes were asked.
  std::vector<NodeKubernetesConfig> kubernetes_config{};
  // What the plan's drains will meet (disruption_forecast.h); unset when not worked out (an
  // observed-state file, or no step the daemon drains).
  std::optional<DrainForecast> drain_forecast{};
};

// True when the plan upgrades Kubernetes.
bool HasKubernetesStep(const ClusterPlan& plan);

// True when some node's Kubernetes settings cannot be patched (the step's pre-check refuses).
bool KubernetesConfigRefused(const PlanReportEntry& e);

// A blocked plan whose cluster the daemon is still working on: a node in flight (known from
// the status branch) is unreachable while it reboots, which blocks planning but not the
// rollout, so the entry shows what the daemon does next and is not counted as blocked.
bool FollowsNodesInFlight(const PlanReportEntry& e);

std::string RenderPlanText(const std::vector<PlanReportEntry>& entries);
std::string RenderPlanMarkdown(const std::vector<PlanReportEntry>& entries);

}  // namespace tr::core
