// How the rollout memory (what the reconciler records on the status branch) changes: after an
// action succeeded, and when a recorded failure stops counting.
//
// Pure: time is passed in. Thread-compatible.
#pragma once

#include <string>

#include "core/rollout.h"

namespace tr::core {

// The memory after `decision`'s action succeeded at `now`: the operation recorded or moved to
// its next phase (with `actor_id` when the call returned one), a completed node cleared with
// the settle time started, the boot of the node's first call kept when the operation had none, a
// failure recorded (clearing the nodes in flight), the pre-pull or snapshot remembered. Decisions
// that act on nothing return `memory` unchanged.
RolloutMemory RecordAction(const RolloutDecision& decision, RolloutMemory memory,
                           const Policy& policy, TimePoint now, const std::string& actor_id = "");

// The memory after the call that asks `node` to install or upgrade failed without reaching it
// (a failed pull before it, a connection that never carried it). While the node's operation
// is only recorded, the boot it was recorded on stops guarding it: a node that rebooted by
// itself meanwhile is asked on its new boot, not waited on until its deadline. The next call
// that moves the operation on records the boot it was made on (RecordAction). Unchanged when
// the operation is past kRecorded: the node may have been asked before.
RolloutMemory AfterCallNeverReceived(RolloutMemory memory, const std::string& node);

// The memory after a lifecycle install of `image` went through while `seen`, its node, still
// only recorded, runs its old Talos on a boot other than the one recorded: the node rebooted by
// itself around the call (a power cut a look had not seen yet), and the install is on the boot
// it came back on (one before it would have booted the target). As after a call that never
// reached the node, that boot stops guarding the operation: the install's decision is taken
// again, collects the install, and records the boot its drain and reboot go by. Unchanged
// otherwise (the node on its recorded boot, booting, on the target, or the operation past
// kRecorded).
RolloutMemory AfterInstallOnAnotherBoot(RolloutMemory memory, const NodeObservation& seen,
                                        const std::string& image);

// A failure halts only the Talos target it happened on: true while `memory` holds a failure
// recorded for `target` and `schematic` (the profile's resolved schematic ID, empty when it
// names none) under `retry_token`. Once the desired version or schematic changes, or someone
// asks for a retry (a new token), the rollout starts afresh.
bool HaltedByFailure(const RolloutMemory& memory, const Version& target,
                     const std::string& schematic, const std::string& retry_token);
// The same for `profile`'s desired Talos, the schematic being the one the failed node should
// run (its own, else the profile's).
bool HaltedByFailure(const RolloutMemory& memory, const ClusterProfile& profile);

// Whether `image` was pre-pulled: the step's installer, or (`node_image`) nodes' own.
bool Prepulled(const RolloutMemory& memory, const std::string& image, bool node_image);

// Whether the record of `kind`'s result may wait for the next record of the same reconcile and
// go out with it in one push (the write-ahead record of the next node names it too). True only
// where losing the record repeats a step that is safe to repeat and touches no node's boot: a
// pre-pull (pulled again), an etcd snapshot (taken again), a completed node (completed again).
// Never for a node's start or a call to a node: those are on the status branch before the
// next call.
bool RecordMayWaitForNext(ActionKind kind);

}  // namespace tr::core
