// A cluster's status as data (docs/status.md; status.h builds one from a reconcile): the phase,
// the Talos and Kubernetes components, conditions, nodes, the rollout memory, the health
// checks' last answers, history and the proposal. Here, apart from how it is built, so that its
// YAML (status_yaml.h, status_decode.h) needs no rules.
//
// Thread-compatible.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/fence.h"
#include "core/health_gate_types.h"
#include "core/rollout_types.h"
#include "core/timestamp.h"

namespace tr::core {

enum class ComponentState { kIdle, kInProgress, kCompleted, kFailed, kBlocked };
const char* ComponentStateName(ComponentState state);  // "idle", "in-progress", ...

struct ComponentStatus {
  std::string current;    // lowest version the nodes run; empty when unknown
  std::string target;     // desired version
  std::string available;  // newest release in the catalog
  ComponentState state = ComponentState::kIdle;
  std::string message;
  std::string progress;  // "2/5"
  // Talos of a profile with an Image Factory schematic: the schematic ID the nodes still to
  // move run (the desired one once every node runs it; empty while none could be read), and
  // the desired one. Both empty otherwise.
  std::string schematic_current{};
  std::string schematic_target{};

  bool operator==(const ComponentStatus&) const = default;
};

struct Condition {
  std::string type;  // TalosUpgrade | KubernetesUpgrade | Ready
  bool status = false;
  std::string reason;  // CamelCase: InProgress, Succeeded, Failed, Blocked, Idle, ...
  std::string message;
  TimePoint last_transition;

  bool operator==(const Condition&) const = default;
};

struct NodeStatus {
  std::string name;
  std::string role;
  std::string talos;    // last observed; empty when never seen
  std::string kubelet;  // last observed; empty when never seen
  bool ready = false;
  // False while the node does not answer (rebooting, down): `talos` and `kubelet` are then the
  // versions last seen, at `last_seen` (the last recorded status in which it answered).
  bool reachable = true;
  std::optional<TimePoint> last_seen;
  std::string last_operation;  // "upgraded to Talos 1.12.0 in 6m12s"
  std::optional<std::chrono::seconds> last_upgrade_duration;
  std::string schematic{};  // Image Factory schematic ID last observed; empty when not known
  // The node's boot (/proc/sys/kernel/random/boot_id) last observed, and when the reconciler
  // first saw it: the node has been up at least since then. Empty and unset while unknown.
  std::string boot_id{};
  std::optional<TimePoint> boot_seen{};

  bool operator==(const NodeStatus&) const = default;
};

struct HistoryEntry {
  TimePoint at;
  std::string event;

  bool operator==(const HistoryEntry&) const = default;
};

inline constexpr size_t kMaxHistory = 20;

// The release proposal that concerns a cluster (docs/proposals.md): its branch, the versions
// it proposes for this cluster, and its pull request when one is known.
struct ProposalRef {
  std::string branch{};
  std::string talos{};       // the proposed version; empty when unchanged
  std::string kubernetes{};  // the same
  int64_t pull_request = 0;  // 0: none (no --forge, or not opened yet)
  std::string url{};         // the pull request's web page; empty when unknown

  bool operator==(const ProposalRef&) const = default;
};

struct ClusterStatus {
  std::string cluster;
  // With leader election, who wrote this record and under which generation (core/fence.h);
  // set by the fenced status store as it records, not part of the status's content.
  std::optional<Fence> fence;
  // The profile's metadata.labels; kept from the previous status while the profile is invalid,
  // so a broken profile does not change who is notified.
  std::map<std::string, std::string> labels;
  ClusterPhase phase = ClusterPhase::kReady;
  std::string message;
  TimePoint updated;
  std::string desired_commit_attempted;
  std::string desired_commit_applied;
  ComponentStatus talos;
  ComponentStatus kubernetes;
  std::vector<Condition> conditions;
  std::vector<NodeStatus> nodes;
  RolloutMemory rollout;
  GateState gates;                    // the health checks' last answers
  std::vector<HistoryEntry> history;  // newest last, at most kMaxHistory
  std::optional<ProposalRef> proposal{};  // written only when there is one

  bool operator==(const ClusterStatus&) const = default;
};

}  // namespace tr::core
