// What becomes of a rollout decision once the shell has tried to act on it. The reconciler
// executes and reports; every phase transition that follows an action (a refusal halts, a step
// still running waits, a step of another action holds this one, a dry run only says) is made
// here, by pure functions tested in core like DecideNextAction itself.
//
// Pure; thread-compatible.
#pragma once

#include <string_view>

#include "core/profile.h"
#include "core/rollout.h"
#include "core/timestamp.h"

namespace tr::core {

// The node or the cluster refused `tried` (an error classified as one that halts): the cluster
// is UpgradeFailed with the refusal in its own words, recorded as the rollout's failure.
RolloutDecision ActionRefused(const RolloutDecision& tried, const ClusterProfile& profile,
                              std::string_view error, TimePoint now);

// `running` has not finished (a step in the background, or one the node says is already in
// progress, `why`): nothing to record but the wait; look again at `next_look`.
RolloutDecision StillRunning(const RolloutDecision& running, std::string_view why,
                             TimePoint next_look);

// Another step of the cluster (`busy_kind` on `busy_node`, "" for the whole cluster) is still
// running in the background: `held` waits for it and is decided again at `next_look`.
RolloutDecision HeldByRunningStep(const RolloutDecision& held, ActionKind busy_kind,
                                  std::string_view busy_node, TimePoint next_look);

// A dry run acts on nothing: the decision says what it would have done.
RolloutDecision DryRun(const RolloutDecision& decision);

}  // namespace tr::core
