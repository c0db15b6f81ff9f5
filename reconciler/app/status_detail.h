// `talos-reconciler status CLUSTER`: one cluster's recorded status in full, for a person — what
// the fleet table's one line leaves out: every node (versions, schematic, the phase of its
// operation in flight, when it was last seen, since when its boot has been seen, its last
// upgrade), the step in flight with its
// deadline, the failure that halts the cluster, the conditions, the health checks' last answers
// and the history as a timeline (oldest first, each with how long before the next).
//
// Pure; thread-compatible.
#pragma once

#include <string>

#include "core/status_types.h"
#include "core/timestamp.h"

namespace tr::reconciler {

std::string RenderClusterDetail(const core::ClusterStatus& status, core::TimePoint now);

// "45s", "12m", "3h", "2d": a duration as the status tables show ages.
std::string ShortDuration(std::chrono::seconds duration);

}  // namespace tr::reconciler
