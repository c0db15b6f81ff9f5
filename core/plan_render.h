// Renders plans for people and programs: plain text for the terminal, Markdown for pull-request
// comments, and JSON, a contract other tools read:
//
//   {"clusters": [{"name", "status": "planned"|"blocked"|"up-to-date"|"invalid", "message",
//                  "paused", "current": {"talos", "kubernetes"}, "target": {...},
//                  "steps": [{"type": "talos"|"kubernetes", "from", "to", "nodes": [...],
//                             "batches": [[...]], "image"}],
//                  "gates": [...], "estimateSeconds", "diagnostics": [...]}]}
//
// Pure; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/planner.h"

namespace tr::core {

// One cluster's entry in a report: its plan, or why its profile is invalid.
struct PlanReportEntry {
  std::string cluster;
  std::optional<ClusterPlan> plan;  // unset when the profile is invalid
  Diagnostics diagnostics;          // the invalid profile's problems
};

std::string RenderPlanText(const std::vector<PlanReportEntry>& entries);
std::string RenderPlanMarkdown(const std::vector<PlanReportEntry>& entries);
std::string RenderPlanJson(const std::vector<PlanReportEntry>& entries);

}  // namespace tr::core
