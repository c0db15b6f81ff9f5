#include "reconciler/operations/k8s_upgrade/rollout_step.h"

#include "fmt/format.h"

namespace tr::reconciler::k8s_upgrade {

void FollowKubernetesUpgrade(KubernetesUpgradeRunner& runner, const core::ClusterProfile& profile,
                             const core::ClusterPlan& plan, const core::SupportMatrix& matrix,
                             core::TimePoint now, std::chrono::milliseconds poll,
                             core::RolloutDecision& decision) {
  const core::PlanStep& step = plan.steps.front();
  const UpgradeTaskStatus task = runner.Ensure(profile, step.to, matrix);
  const std::string hop =
      fmt::format("upgrading Kubernetes {} → {}", step.from.ToString(), step.to.ToString());
  decision.kind = core::ActionKind::kNone;
  switch (task.state) {
    case UpgradeTaskStatus::State::kRunning:
    case UpgradeTaskStatus::State::kSucceeded:
      decision.phase = core::ClusterPhase::kUpgradingKubernetes;
      decision.message = task.state == UpgradeTaskStatus::State::kSucceeded
                             ? hop + ": done, waiting for the nodes to show it"
                         : task.progress.empty() ? hop + ": starting"
                                                 : hop + ": " + task.progress;
      decision.wait_until = now + poll;
      return;
    case UpgradeTaskStatus::State::kFailed:
      decision.phase = core::ClusterPhase::kUpgradeFailed;
      decision.message = fmt::format("Kubernetes upgrade to {} failed: {}{}: {}",
                                     step.to.ToString(), task.outcome.component,
                                     task.outcome.node.empty() ? "" : " on " + task.outcome.node,
                                     std::string(task.outcome.status.message()));
      decision.node = task.outcome.node;
      decision.wait_until = now + poll;  // a retryable failure is started again on the next look
      return;
  }
}

}  // namespace tr::reconciler::k8s_upgrade
