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
#include "core/health_gates.h"
#include "core/observed.h"
#include "core/planner.h"
#include "core/rollout.h"
#include "core/status_types.h"
#include "core/support_matrix.h"

namespace tr::core {

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

// True when both are Ready and `next` differs from `recorded` only in what it reports and in the
// commit it was derived from (desiredCommit, attempted and applied): a profile commit that asks
// nothing of this cluster. A restarted reconciler derives that commit again from the repository
// and records it, so such a status may be recorded without waiting for it either; a merge then
// moves the other clusters' statuses along with the write-ahead record of the one it changes, in
// one push, instead of in a push of their own ahead of it.
bool OnlyCommitOfReadyClusterDiffers(const ClusterStatus& recorded, const ClusterStatus& next);

}  // namespace tr::core
