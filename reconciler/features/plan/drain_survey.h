// The drain forecast of a plan, read live: the cluster's workloads from its Kubernetes API
// (reconciler/clients/kube/workload_reads.h) played against the plan's drains
// (core/disruption_forecast.h). Read only: nothing in the cluster changes.
//
// Thread-compatible.
#pragma once

#include <functional>

#include "core/disruption_types.h"
#include "core/plan_types.h"
#include "core/profile_set.h"
#include "reconciler/clients/cluster_clients.h"

namespace tr::reconciler {

// The forecast of `profile`'s `plan`; nullopt when the plan drains nothing (no Talos step).
using DrainSurvey = std::function<std::optional<core::DrainForecast>(
    const core::ClusterProfile& profile, const core::ClusterPlan& plan)>;

// Surveys through `clients`, the cluster dialled as `trusted` (the watched branch's profiles)
// names it, with the drain policy of the profile planned. A cluster whose API cannot be read
// (no kubeconfig yet, the reads refused, too many pods) gets a forecast that says why
// (`unavailable`), never a failed plan.
DrainSurvey DrainSurveyThrough(ClusterClientFactory& clients, const core::ProfileSet& trusted);

}  // namespace tr::reconciler
