#include "core/plan_outlook.h"

#include "core/rollout_record.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

std::string NotRunReason(const ClusterProfile& profile, const PlanStep& step) {
  return fmt::format(
      "this daemon does not run Kubernetes steps (--kubernetes-upgrade-mode off): run "
      "talos-reconciler upgrade-k8s --cluster {} --to {}",
      profile.name, step.to.ToString());
}

bool Upgrading(ClusterPhase phase) {
  return phase == ClusterPhase::kUpgradingTalos || phase == ClusterPhase::kUpgradingKubernetes;
}

// Every step from `first` on is not run, for `reason`.
void NotRunFrom(size_t first, const std::string& reason, PlanOutlook& out) {
  for (size_t i = first; i < out.steps.size(); ++i) out.steps[i] = {StepRun::kNotRun, reason};
}

}  // namespace

const char* StepRunName(StepRun run) {
  switch (run) {
    case StepRun::kRuns:
      return "runs";
    case StepRun::kWaits:
      return "waits";
    case StepRun::kNotRun:
      return "not-run";
  }
  return "runs";
}

RolloutDecision KubernetesStepNotRun(const RolloutDecision& start, const ClusterProfile& profile,
                                     const PlanStep& step, std::string_view why) {
  RolloutDecision d = start;
  d.kind = ActionKind::kNone;
  d.phase = ClusterPhase::kBlocked;
  d.message = fmt::format(
      "next: {}; this daemon does not run Kubernetes steps ({}): run talos-reconciler "
      "upgrade-k8s --cluster {} --to {}",
      start.message, why, profile.name, step.to.ToString());
  return d;
}

PlanOutlook OutlookOf(const OutlookInput& in) {
  const ClusterPlan& plan = in.plan;
  RolloutInput rollout{in.profile, plan, in.observed, in.memory, in.window, in.gates, in.now};
  if (in.profile.promotion && plan.status == PlanStatus::kPlanned) {
    PromotionVerdict unknown;
    unknown.ready = false;
    unknown.message =
        "spec.promotion not evaluated: plan --status DIR (a checkout of the status branch) "
        "tells whether the clusters it follows are ready";
    rollout.promotion = in.promotion.value_or(unknown);
  }
  rollout.kubernetes_step_started = in.kubernetes_step_started;
  RolloutDecision decision = DecideNextAction(rollout);
  if (decision.kind == ActionKind::kStartKubernetesUpgrade && !in.kubernetes_upgrades) {
    decision = KubernetesStepNotRun(decision, in.profile, plan.steps.front(),
                                    "--kubernetes-upgrade-mode off");
  }
  PlanOutlook out{decision.phase, decision.message, {}};
  out.steps.resize(plan.steps.size());
  if (decision.phase == ClusterPhase::kUpgradeFailed && decision.kind == ActionKind::kNone) {
    NotRunFrom(
        0, decision.message + "; nothing more runs until the profile's talos.version changes", out);
    return out;
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].type == StepType::kKubernetes && !in.kubernetes_upgrades) {
      out.steps[i] = {StepRun::kNotRun, NotRunReason(in.profile, plan.steps[i])};
      NotRunFrom(i + 1, fmt::format("not reached: the daemon stops before step {}", i + 1), out);
      break;
    }
  }
  if (!out.steps.empty() && out.steps.front().run == StepRun::kRuns &&
      decision.kind == ActionKind::kNone && !Upgrading(decision.phase)) {
    out.steps.front() = {StepRun::kWaits, decision.message};
  }
  return out;
}

}  // namespace tr::core
