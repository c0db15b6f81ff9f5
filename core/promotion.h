// Promotion between clusters (spec.promotion): whether a cluster may start its new version,
// judged from the status the named clusters last recorded on the status branch. A cluster
// waits until every named cluster runs at least the versions it is about to start, is Ready,
// and has been Ready for `soak`. A rollout that has already begun (its installer image was
// pulled for this step, a node is in flight, or a node of the step already runs its target)
// is seen through.
//
// Pure: time is passed in. Thread-compatible.
#pragma once

#include <map>
#include <string>

#include "core/planner.h"
#include "core/profile.h"
#include "core/rollout.h"
#include "core/status.h"

namespace tr::core {

// `statuses`: every cluster's last recorded status, by name.
PromotionVerdict EvaluatePromotion(const ClusterProfile& profile, const ClusterPlan& plan,
                                   const RolloutMemory& memory,
                                   const std::map<std::string, ClusterStatus>& statuses,
                                   TimePoint now);

}  // namespace tr::core
