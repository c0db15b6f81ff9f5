// The one machine-readable shape of `plan` and `status` (docs/validate-and-plan.md, "Output formats"): a document
// {"clusters": [...]} with one object per cluster, in JSON or the same object in YAML.
//
// Every cluster object has the same core, built in one place:
//   name, phase (the daemon's vocabulary: Ready, UpgradingTalos, ..., Blocked), message, paused,
//   talos {from, to}, kubernetes {from, to}   (from: the lowest version the nodes run; null
//                                               when unknown; to: what the profile asks for)
//   nodes [{name, role, talos, kubelet, ready, reachable}]
// `plan` adds: plan (planned | blocked | up-to-date | invalid), next (what the daemon would do
//   now), steps [{type, from, to, nodes, batches, image, daemon: runs|waits|not-run, reason}],
//   gates, estimateSeconds, diagnostics.
// `status` adds: updated, revision, progress, talos/kubernetes {available, status, progress,
//   message}, nodes[] {schematic, bootId, bootSeen (when that boot was first seen), phase (of
//   its operation in flight), lastSeen, lastOperation, lastUpgradeSeconds}, conditions (Kubernetes' shape: status "True"/"False",
//   lastTransitionTime), inFlight [{node, target, image, phase, started, deadline}], failure
//   {node, talosTarget, message, at, retry} or null, history [{at, event}], healthChecks.
//
// Pure; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "core/plan_render.h"
#include "core/status.h"

namespace tr::core {

enum class ReportFormat { kJson, kYaml };

std::string RenderPlanReport(const std::vector<PlanReportEntry>& entries, ReportFormat format);
std::string RenderStatusReport(const std::vector<ClusterStatus>& statuses, ReportFormat format);

// A Markdown table of the statuses (cluster, phase, Talos, Kubernetes, progress, updated,
// message), as a pull request comment or a wiki page shows it.
std::string RenderStatusMarkdown(const std::vector<ClusterStatus>& statuses);

}  // namespace tr::core
