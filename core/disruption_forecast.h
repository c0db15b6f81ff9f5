// The drain forecast: the drains of a plan played, in the planned order, against a cluster's
// workloads as read before the rollout, to say which pod will hold which node's drain and why.
//
// The model is the one the API server and the scheduler apply (docs/pull-requests.md,
// "Disruption forecast"): an eviction is allowed while every budget selecting the pod keeps
// its healthy pods at or above what it needs (an unhealthy pod may go while the budget is
// healthy); an evicted pod's controller recreates it on the least loaded node that is
// schedulable and Ready, matches its node selector, its claimed volume's node, its required
// anti-affinity (both ways) and its hostname topology spread; a pod with no such node stays
// Pending until a drained node comes back; a pod with no controller is gone. A drain retries
// until nothing more can go, so a budget only blocks when it cannot recover.
//
// Pure; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "core/disruption_types.h"
#include "core/plan_types.h"
#include "core/profile.h"
#include "core/status_types.h"

namespace tr::core {

// Plays the drains of `batches` (the nodes of one Talos step, in order; the nodes of a batch
// are cordoned together) on `workloads`. `force`: policy.drain.onTimeout is force. A node whose
// pods are blocked is forecast as halting; the nodes after it as if it had been forced, so that
// every blocker is named. When a blocker exists and the cluster is small enough to try, the
// first single-node move that makes every drain finish is named in `better_order`.
DrainForecast ForecastDrains(const ClusterWorkloads& workloads,
                             const std::vector<std::vector<std::string>>& batches, bool force);

// The forecast of `plan`: its first Talos step on the lifecycle path (the daemon drains; the
// later Talos steps drain in the same order), with the legacy steps listed (Talos drains those
// nodes itself, without the daemon's policy.drain). Empty `nodes` when no step drains.
DrainForecast ForecastPlanDrains(const ClusterPlan& plan, const ClusterWorkloads& workloads,
                                 bool force);

// Adds how long each node and the whole drained step took in `status`'s last rollouts: per
// role, the range of its nodes' last upgrade durations (call to healthy); the step's range
// adds the batches' slowest node and the settle time after each batch. Nothing is added for a
// node whose role has no recorded duration, nor for the step unless every node has one.
void AddDurations(DrainForecast& forecast, const ClusterPlan& plan, const ClusterProfile& profile,
                  const ClusterStatus& status);

// "budget default/web allows no eviction (needs 2 healthy, has 2)": why a budget refuses.
std::string BudgetRefusal(const DisruptionBudget& budget, int needed, int healthy);

}  // namespace tr::core
