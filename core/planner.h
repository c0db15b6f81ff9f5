// The planner: desired versions x observed nodes -> a plan per cluster (docs/architecture.md).
//
// A plan is the ordered list of hops from what the nodes run to what the profile asks for:
// Talos one minor at a time (latest patch of each intermediate minor), Kubernetes one minor at
// a time, every intermediate (Talos, Kubernetes) pair supported by the matrix, every Talos hop
// allowed from its source version. When both orders are safe, Talos goes first unless the
// policy prefers Kubernetes first. Each Talos step lists its nodes in order and in batches:
// workers first (up to maxParallelWorkers at once), then control planes one at a time with the
// etcd leader last; the reconciler's own node goes last within its group. No safe path, an
// unsupported desired pair, an unknown release, a Talos release the catalog marks broken that
// a node would still get, or an unallowed downgrade gives a Blocked plan with a message a person
// can act on.
//
// Pure and deterministic; thread-compatible.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/observed.h"
#include "core/plan_types.h"
#include "core/profile.h"
#include "core/support_matrix.h"
#include "core/version.h"

namespace tr::core {

// Assumed time for one node's Talos upgrade when the node has no recorded duration.
inline constexpr std::chrono::seconds kDefaultTalosNodeDuration{6 * 60};
// Assumed time for one node's kubelet, and per control plane its static pods, in a
// Kubernetes step.
inline constexpr std::chrono::seconds kDefaultKubeletDuration{90};
inline constexpr std::chrono::seconds kDefaultControlPlaneComponentsDuration{3 * 60};

// Plans one cluster. `observed` must describe the profile's nodes (by name); nodes it lacks
// or reports unreachable block the plan.
ClusterPlan PlanCluster(const ClusterProfile& profile, const ObservedCluster& observed,
                        const SupportMatrix& matrix, const ReleaseCatalog& catalog);

// "Talos 1.11.6 → 1.12.0", "Kubernetes 1.34.1 → 1.35.0"; a step that only changes the
// schematic: "Talos 1.14.0 reinstalled with schematic <id>" ("with schematics <a>, <b>" when its
// nodes get different ones).
std::string StepTitle(const PlanStep& step);

// Whether a node on `version` upgrades through LifecycleService (pull, install, reboot)
// rather than the legacy MachineService/Upgrade: talosctl's rule, > 1.13.0-alpha.2 and < 2.
bool UsesLifecycleApi(const Version& version);

}  // namespace tr::core
