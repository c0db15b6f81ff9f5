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
#include "core/profile.h"
#include "core/support_matrix.h"
#include "core/version.h"

namespace tr::core {

enum class PlanStatus { kUpToDate, kPlanned, kBlocked };
const char* PlanStatusName(PlanStatus status);  // "up-to-date" | "planned" | "blocked"

enum class StepType { kTalos, kKubernetes };
const char* StepTypeName(StepType type);  // "talos" | "kubernetes"

// The installer of a node with a schematic of its own (spec.nodes[].schematic).
struct NodeInstaller {
  std::string image;      // "<repository>:v<to>"
  std::string schematic;  // its ID

  bool operator==(const NodeInstaller&) const = default;
};

struct PlanStep {
  StepType type = StepType::kTalos;
  Version from;  // what the step's nodes run before it (the lowest, when they differ)
  Version to;
  // Nodes in order, grouped into batches that run at once. Talos: worker batches of up to
  // maxParallelWorkers, then one control plane per batch. Kubernetes: control planes, then
  // workers, one per batch (the upgrade-k8s order).
  std::vector<std::vector<std::string>> batches;
  std::string installer_image;  // Talos steps: "<repository>:v<to>"
  // Talos steps of a profile with an Image Factory schematic: the schematic's ID, which every
  // node of the step runs afterwards. A step with `from` == `to` only changes the schematic.
  std::string schematic;
  // Talos steps: the nodes whose own schematic differs from the profile's get this installer
  // instead of the two above (InstallerFor, SchematicFor).
  std::map<std::string, NodeInstaller> own_installers{};

  std::vector<std::string> Nodes() const;  // the batches, flattened
};

struct ClusterPlan {
  std::string cluster;
  PlanStatus status = PlanStatus::kUpToDate;
  std::string message;                   // the blocked reason, or a one-line summary
  bool paused = false;                   // policy.paused: planned, but nothing will be acted on
  std::optional<Version> talos_current;  // lowest Talos version observed
  std::optional<Version> kubernetes_current;  // lowest kubelet version observed
  Version talos_target;
  Version kubernetes_target;
  std::vector<PlanStep> steps;
  std::vector<std::string> gates;  // checks that hold the rollout between and before nodes
  std::chrono::seconds estimate{0};
};

// The installer image and schematic ID `node` gets in `step`: its own, else the step's.
const std::string& InstallerFor(const PlanStep& step, const std::string& node);
const std::string& SchematicFor(const PlanStep& step, const std::string& node);

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
