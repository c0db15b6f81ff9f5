// The rollout state machine: given the plan, what the nodes look like now, and what the
// reconciler remembers (the operation in flight, recorded on the status branch before any
// call), decide the one next thing to do (docs/architecture.md).
//
// The daemon calls DecideNextAction on every reconcile, performs the action, records the
// result in RolloutMemory, and calls it again until the decision is to wait. Because the
// decision rests on observation plus the recorded memory, a restarted process resumes where
// the last one stopped, and a node that already runs the target is never upgraded again.
//
// Pure: time is passed in. Thread-compatible.
#pragma once

#include "core/rollout_types.h"

namespace tr::core {

// Before anything new starts, every start check of the profile (start_checks.h, the list
// `plan` prints) must pass, in that list's order; the first that fails is the decision.
RolloutDecision DecideNextAction(const RolloutInput& input);

// Whether DecideNextAction may read the control planes' etcd (membership, health, leadership)
// for `plan` and `memory`: not when nothing is in flight or staged and the plan is up to date,
// the steady state of most clusters, whose look then asks etcd nothing.
bool DecisionReadsEtcd(const ClusterPlan& plan, const RolloutMemory& memory);

}  // namespace tr::core
