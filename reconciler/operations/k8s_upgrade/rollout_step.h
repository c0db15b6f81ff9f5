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

// Rewrites `decision` (kind kStartKubernetesUpgrade for the first step of `plan`) into one that
// acts on nothing: running → phase UpgradingKubernetes, "upgrading Kubernetes 1.34.1 → 1.35.0:
// kubelets 3/5", look again after `poll`; done → the same phase until the nodes show it; failed →
// phase UpgradeFailed with the component, node and message (retried by the runner only when an
// API did not answer).
void FollowKubernetesUpgrade(KubernetesUpgradeRunner& runner, const core::ClusterProfile& profile,
                             const core::ClusterPlan& plan, const core::SupportMatrix& matrix,
                             core::TimePoint now, std::chrono::milliseconds poll,
                             core::RolloutDecision& decision);

}  // namespace tr::reconciler::k8s_upgrade
