// The status of a cluster as users see it (docs/status.md): the phase, for Talos and for
// Kubernetes the current / target / available versions with a status, message and progress,
// conditions, per-node versions and last operations, the rollout memory (operation in flight,
// pre-pull, snapshot, settle, failure), the desired commit last attempted and last applied,
// and a short history. One ClusterStatus is written as `status/<cluster>.yaml` on the status
// branch (status_yaml.h), and read back after a restart to resume.
//
// Pure: time is passed in. Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/fence.h"
#include "core/health_gates.h"
#include "core/observed.h"
#include "core/planner.h"
#include "core/rollout.h"
#include "core/support_matrix.h"

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

// Everything a reconcile knows when it records status.
struct StatusInput {
  std::string cluster;
  const ClusterStatus* previous = nullptr;  // the last recorded status, if any
  const ClusterProfile* profile = nullptr;  // null when the profile is invalid
  const Diagnostics* invalid = nullptr;     // the invalid profile's problems
  const ClusterPlan* plan = nullptr;
  const ObservedCluster* observed = nullptr;
  const RolloutDecision* decision = nullptr;
  RolloutMemory memory;  // after the reconcile's actions
  GateState gates;       // the health checks' last answers, as of this reconcile
  const ReleaseCatalog* catalog = nullptr;
  std::string desired_commit;
  std::vector<std::string> events;  // what happened in this reconcile, for history
  TimePoint now;
  std::optional<ProposalRef> proposal{};  // the proposal that concerns the cluster, if any
};

// `observed` with the Talos and kubelet versions of nodes that did not answer filled in from
// `previous` (their last recorded versions), and the schematic of nodes whose extensions were
// not read (LastSeenSchematic), so a reboot neither blanks the versions nor sets progress back.
// Such nodes stay unreachable (unread): no check takes them for seen.
ObservedCluster WithLastKnownVersions(ObservedCluster observed, const ClusterStatus* previous);

// The new status; conditions keep their transition time while their status holds.
ClusterStatus BuildClusterStatus(const StatusInput& input);

// True when `next` differs from `recorded` only in what it reports — message, time, node
// observations, conditions, the component summaries — and not in anything a restarted
// reconciler resumes from: phase, desired commits, rollout memory, health-check state, history,
// labels (an invalid profile's status keeps them from the recorded one).
// Such a status may be recorded without waiting for it to be durable.
bool OnlyReportDiffers(const ClusterStatus& recorded, const ClusterStatus& next);

}  // namespace tr::core
