// The rollout reconciler's side of a Kubernetes step: the decision "start the Kubernetes
// upgrade" becomes a supervised task (KubernetesUpgradeRunner), and the recorded decision says
// what the task is doing: UpgradingKubernetes with its progress, or UpgradeFailed naming the
// component and node.
//
// Thread-safe as the runner is.
#pragma once

#include <chrono>

#include "core/planner.h"
#include "core/rollout.h"
#include "reconciler/operations/k8s_upgrade/upgrade_runner.h"

namespace tr::reconciler::k8s_upgrade {

// Ensures the runner's task for the first step of `plan` and rewrites `decision` (the start of
// that step) into what core::FollowingKubernetesTask makes of the task: a decision that acts on
// nothing, UpgradingKubernetes ("upgrading Kubernetes 1.34.1 → 1.35.0: kubelets 3/5") or
// UpgradeFailed, looked at again after `poll`.
void FollowKubernetesUpgrade(KubernetesUpgradeRunner& runner, const core::ClusterProfile& profile,
                             const core::ClusterPlan& plan, const core::SupportMatrix& matrix,
                             core::TimePoint now, std::chrono::milliseconds poll,
                             core::RolloutDecision& decision);

}  // namespace tr::reconciler::k8s_upgrade
