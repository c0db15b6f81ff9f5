// A plan as data (planner.h makes one): its steps, their nodes in batches, their installers,
// and what the cluster's plan says as a whole. Here, apart from the planner, so that the
// decoders, the rollout's records and the status can use it without the planner's rules.
//
// Thread-compatible.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

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
  // Blocked by a Talos release the Image Factory marks broken: that release.
  std::optional<Version> broken_release{};
};

// The installer image and schematic ID `node` gets in `step`: its own, else the step's.
const std::string& InstallerFor(const PlanStep& step, const std::string& node);
const std::string& SchematicFor(const PlanStep& step, const std::string& node);

}  // namespace tr::core
