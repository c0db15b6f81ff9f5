// The health checks of a policy (policy.healthChecks) as the rollout sees them: the last
// answer of each, when it was checked, and since when the rollout has been waiting on a
// failing one. The daemon runs the checks (reconciler/operations/gates/) before the first node of a
// step and after each settled node; this part folds their results into that state, tells
// DecideNextAction whether the gates pass, and decides what a failing gate means: wait with
// backoff, phase WaitingForGate, and after policy.gateTimeout, fail the rollout.
//
// Pure: time is passed in. Thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/health_gate_types.h"
#include "core/rollout_types.h"
#include "core/timestamp.h"

namespace tr::core {

// `previous` with fresh `results` (each stamped `now`): the wait starts at the first failing
// answer and ends at the first all-healthy one.
GateState UpdateGateState(const GateState& previous, std::vector<GateResult> results,
                          TimePoint now);

// `state` as a decision that starts nothing leaves it: a rollout that stopped otherwise than
// waiting for a gate or upgrading Talos (paused, blocked, failed, done) ends the gate wait, so
// a later one starts its gateTimeout afresh.
GateState AfterDecisionStartingNothing(GateState state, const RolloutDecision& decision);

// What DecideNextAction is told: passed when every check was healthy in its last answer.
ExtraGateResult GateVerdict(const GateState& state);

// The decision while a gate fails and no node may start: wait (phase WaitingForGate, looking
// again after a backoff that grows with the wait, at most one minute, never past the
// timeout), or, after policy.gateTimeout with no node in flight, fail the rollout.
RolloutDecision WaitForGates(const RolloutInput& in, Progress progress);

}  // namespace tr::core
