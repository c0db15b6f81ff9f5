#include "reconciler/operations/k8s_upgrade/rollout_step.h"

#include "core/rollout_outcomes.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

core::KubernetesTask TaskAsCoreSeesIt(const UpgradeTaskStatus& task) {
  using State = core::KubernetesTask::State;
  core::KubernetesTask seen;
  seen.state = task.state == UpgradeTaskStatus::State::kFailed      ? State::kFailed
               : task.state == UpgradeTaskStatus::State::kSucceeded ? State::kSucceeded
                                                                    : State::kRunning;
  seen.progress = task.progress;
  seen.component = task.outcome.component;
  seen.node = task.outcome.node;
  seen.error = std::string(task.outcome.status.message());
  return seen;
}

}  // namespace

void FollowKubernetesUpgrade(KubernetesUpgradeRunner& runner, const core::ClusterProfile& profile,
                             const core::ClusterPlan& plan, const core::SupportMatrix& matrix,
                             core::TimePoint now, std::chrono::milliseconds poll,
                             core::RolloutDecision& decision) {
  const core::PlanStep& step = plan.steps.front();
  const UpgradeTaskStatus task = runner.Ensure(profile, step.to, matrix);
  decision = core::FollowingKubernetesTask(decision, step, TaskAsCoreSeesIt(task), now + poll);
}

}  // namespace tr::reconciler::k8s_upgrade
