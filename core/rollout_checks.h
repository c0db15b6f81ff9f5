// The checks behind the rollout state machine (rollout.h): is a node done, did it come back
// wrong, may the next node start. Split out so each rule is small and tested on its own.
//
// Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>

#include "core/observed.h"
#include "core/planner.h"
#include "core/profile.h"
#include "core/rollout_types.h"

namespace tr::core {

// The node runs (or, unreachable, last ran) the operation's target version and, when the
// operation names one, its schematic (read from the node, which must answer: an unknown
// schematic is not the target).
bool RunsTarget(const NodeObservation& seen, const OperationInFlight& op);

// The node runs the target after a new boot, RUNNING and ready; legacy upgrades also wait
// for Talos to uncordon it; control planes need a healthy, voting etcd member.
bool NodeVerified(const ClusterProfile& profile, const NodeObservation& seen,
                  const OperationInFlight& op);

// What a look at the control plane of `op`, `seen` without its etcd facts yet, does about
// its etcd: asks it (kAsk); keeps this boot's facts from the last look (kKeep), between the
// call that takes it down (Upgrade, Reboot) and its next boot, when no decision reads its
// member; or leaves them unknown (kUnknown) on a new boot until the node is running and ready,
// since NodeVerified reads its member only then (etcd of a booting node answers "connection
// refused" meanwhile). A new boot when the boot before is unknown.
enum class InFlightEtcd { kAsk, kKeep, kUnknown };
InFlightEtcd EtcdOfNodeInFlight(const NodeObservation& seen, const OperationInFlight& op);

// After the node was asked to upgrade (or, on the lifecycle path, once the new image was
// installed): a new boot on a version or schematic other than the target (the A/B fallback
// after a failed boot). Returns the failure message, or "" when not so (or the new boot's
// schematic could not be read yet).
std::string NodeCameBackWrong(const NodeObservation& seen, const OperationInFlight& op);

// Past its deadline, why the node is not done when that is plain: after a new boot it runs the
// target, RUNNING, but not Ready. Talos keeps such a node on the new version (its A/B fallback
// reverts only on a fatal boot error), so the message says where it is. "" otherwise.
std::string OnTargetNotReady(const NodeObservation& seen, const OperationInFlight& op);

// The node still runs its old boot, untouched: safe to (re)issue the first call.
bool NodeUntouched(const NodeObservation& seen, const OperationInFlight& op);

// What a node in flight is doing, as seen now, for status messages: "cp-1 rebooting into
// 1.12.0", "w-0 installing 1.14.0", "cp-1 back on 1.12.0, waiting for it to become healthy".
// `seen` is null when the node was not observed.
std::string DescribeInFlight(const OperationInFlight& op, const NodeObservation* seen);

// The start checks kNodesReady and kEtcdQuorum (start_checks.h): why nothing new may start
// now, or "" when it may. Nodes in flight are not held against it.
// An unreachable or unready node:
std::string NodesNotReadyProblem(const ClusterProfile& profile, const ObservedCluster& observed,
                                 const RolloutMemory& memory);
// An etcd member not started or unhealthy, or too few members to lose one:
std::string EtcdQuorumProblem(const ClusterProfile& profile, const ObservedCluster& observed,
                              const RolloutMemory& memory);

// The next node of `step` to start, if one may start beside those in flight: any node when
// none is in flight, else another worker while only workers are in flight and fewer than
// maxParallelWorkers.
std::optional<std::string> NextStartableNode(const ClusterProfile& profile, const PlanStep& step,
                                             const RolloutMemory& memory);
// Whether another node may start beside those in flight: none is in flight, or only workers
// are and fewer than maxParallelWorkers. While there is no room, only the nodes in flight can
// change what is decided.
bool RoomBesideInFlight(const ClusterProfile& profile, const RolloutMemory& memory);

// The Talos version the nodes move to now: the first step's when it is a Talos step, else the
// desired one.
Version TalosStepTarget(const ClusterProfile& profile, const ClusterPlan& plan);

// Whether `node` counts as moved in a progress count: it runs `target` and, on the desired
// version, its desired schematic (its own, else the profile's). `talos` and `schematic` are the
// node's last seen values (status.h WithLastKnownVersions, LastSeenSchematic): the one rule by
// which the rollout's progress and a status's node rows are counted.
bool CountsAsMoved(const ClusterProfile& profile, const std::string& node, const Version& target,
                   const std::optional<Version>& talos,
                   const std::optional<std::string>& schematic);

// Nodes that count as moved (CountsAsMoved, at TalosStepTarget) out of all nodes.
Progress TalosProgress(const ClusterProfile& profile, const ClusterPlan& plan,
                       const ObservedCluster& observed);

}  // namespace tr::core
