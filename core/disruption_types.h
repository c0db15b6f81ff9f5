// What a drain forecast reads (a cluster's workloads as the Kubernetes API shows them, reduced
// to what decides an eviction and where a replacement can run) and what it predicts, per node.
// disruption_forecast.h works it out; plan_render.h shows it.
//
// Values only; thread-compatible.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tr::core {

using LabelSet = std::map<std::string, std::string>;

// A budget's minAvailable or maxUnavailable: a count, or a percentage of the expected pods
// (rounded up, as the disruption controller does).
struct CountOrPercent {
  int value = 0;
  bool percent = false;

  bool operator==(const CountOrPercent&) const = default;
};

// spec.topologySpreadConstraints[] with topologyKey kubernetes.io/hostname and
// whenUnsatisfiable DoNotSchedule (the others never keep a pod off a node).
struct HostSpread {
  int max_skew = 1;
  LabelSet selector;

  bool operator==(const HostSpread&) const = default;
};

struct WorkloadPod {
  std::string namespace_name;
  std::string name;
  std::string node;  // spec.nodeName; empty while Pending
  // The controller owner reference's kind and name; kind empty for a pod nothing recreates.
  std::string owner_kind;
  std::string owner_name;
  LabelSet labels;
  bool ready = true;      // condition Ready == True
  bool mirror = false;    // a static pod's mirror: a drain leaves it
  bool terminal = false;  // Succeeded or Failed: a drain leaves it
  // Where a replacement may run: spec.nodeSelector and the single-valued `In` terms of the
  // required node affinity, as labels a node must carry.
  LabelSet node_selector;
  // Required pod anti-affinity over kubernetes.io/hostname: no two pods matching one selector
  // (in this pod's namespace) on one node.
  std::vector<LabelSet> anti_affinity;
  std::vector<HostSpread> spread;
  // The taint keys it tolerates; `tolerates_all`: a toleration with no key and operator Exists.
  std::vector<std::string> tolerations{};
  bool tolerates_all = false;
  bool empty_dir = false;              // an emptyDir volume: its data goes with the pod
  std::vector<std::string> host_paths;  // hostPath volumes: their data stays on the node
  // The node a claimed volume binds the pod to (a local PersistentVolume's node affinity, or a
  // claim of a storage class known to bind to one node); empty when none.
  std::string bound_node;

  bool operator==(const WorkloadPod&) const = default;
};

struct DisruptionBudget {
  std::string namespace_name;
  std::string name;
  LabelSet selector;  // matchLabels; an empty selector selects every pod of the namespace
  std::optional<CountOrPercent> min_available;
  std::optional<CountOrPercent> max_unavailable;

  bool operator==(const DisruptionBudget&) const = default;
};

struct WorkloadNode {
  std::string name;
  LabelSet labels;  // kubernetes.io/hostname is added when missing
  bool schedulable = true;
  bool ready = true;
  bool control_plane = false;  // labelled node-role.kubernetes.io/control-plane
  // The keys of its NoSchedule and NoExecute taints: only pods tolerating each may come.
  std::vector<std::string> taints{};

  bool operator==(const WorkloadNode&) const = default;
};

struct ClusterWorkloads {
  std::vector<WorkloadNode> nodes;
  std::vector<WorkloadPod> pods;
  std::vector<DisruptionBudget> budgets;
};

// What a drain will meet on one node.
enum class HazardKind {
  kBudget,     // an eviction a budget refuses until the timeout: the drain waits, then halts or forces
  kNoRoom,     // evicted, but no other node can run the replacement: it stays Pending
  kUnmanaged,  // no controller: the drain deletes it and nothing recreates it
  kLocalData,  // emptyDir data is lost, or hostPath data stays behind on the node
};
const char* HazardKindName(HazardKind kind);  // "budget" | "no-room" | "unmanaged" | "local-data"

struct DrainHazard {
  HazardKind kind = HazardKind::kBudget;
  std::string pod;     // "<namespace>/<name>"
  std::string reason;  // one line, naming the budget, constraint or volume

  bool operator==(const DrainHazard&) const = default;
};

struct NodeDrainForecast {
  std::string node;
  std::vector<DrainHazard> hazards;
  // The pods the drain cannot evict before its timeout (kBudget hazards): with onTimeout halt
  // the rollout stops here before the reboot; with force the drain deletes them.
  int blocked = 0;
  // A range from earlier rollouts of this cluster (same role and upgrade path); unset: no history.
  std::optional<std::chrono::seconds> duration_low;
  std::optional<std::chrono::seconds> duration_high;

  bool operator==(const NodeDrainForecast&) const = default;
};

struct DrainForecast {
  // Empty when the forecast was made; otherwise why there is none ("the Kubernetes API refused
  // to list pods: ...") and `nodes` is empty.
  std::string unavailable;
  std::vector<NodeDrainForecast> nodes;  // in the planned order
  bool force = false;                    // the drain policy the forecast assumed (onTimeout)
  // What would let every drain finish, when the planned order does not: "drain w-2 before w-1".
  std::string better_order;
  // The rollout's range, summed over the nodes, when every node has history.
  std::optional<std::chrono::seconds> duration_low;
  std::optional<std::chrono::seconds> duration_high;
  // Steps the daemon does not drain itself (legacy Talos path): "Talos 1.12.4 → 1.12.5".
  std::vector<std::string> legacy_steps;

  bool operator==(const DrainForecast&) const = default;
};

}  // namespace tr::core
