#include "reconciler/features/plan/drain_survey.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/disruption_forecast.h"
#include "reconciler/clients/kube/workload_reads.h"

namespace tr::reconciler {
namespace {

bool HasTalosStep(const core::ClusterPlan& plan) {
  return std::any_of(plan.steps.begin(), plan.steps.end(),
                     [](const core::PlanStep& s) { return s.type == core::StepType::kTalos; });
}

std::string WhyUnread(const absl::Status& status) {
  if (absl::IsPermissionDenied(status) || absl::IsUnauthenticated(status)) {
    return absl::StrCat("the Kubernetes API refused the reads (",
                        status.message(),
                        "); grant the reconciler the read-only ClusterRole of "
                        "docs/pull-requests.md, \"Disruption forecast\"");
  }
  return absl::StrCat("the Kubernetes API could not be read: ", status.message());
}

}  // namespace

DrainSurvey DrainSurveyThrough(ClusterClientFactory& clients, const core::ProfileSet& trusted) {
  return [&clients, &trusted](const core::ClusterProfile& profile,
                              const core::ClusterPlan& plan) -> std::optional<core::DrainForecast> {
    if (plan.status != core::PlanStatus::kPlanned || !HasTalosStep(plan)) return std::nullopt;
    const bool force = profile.policy.drain.on_timeout == core::DrainTimeoutAction::kForce;
    core::DrainForecast none;
    none.force = force;
    auto dialled = std::find_if(trusted.profiles.begin(), trusted.profiles.end(),
                                [&](const core::ClusterProfile& p) { return p.name == profile.name; });
    if (dialled == trusted.profiles.end()) {
      none.unavailable = "the cluster is not on the watched branch yet";
      return none;
    }
    absl::StatusOr<ClusterClients> c = clients.ForProfile(*dialled);
    if (!c.ok() || c->kube == nullptr) {
      none.unavailable = "no Kubernetes API client: the cluster's kubeconfig could not be fetched";
      return none;
    }
    absl::StatusOr<core::ClusterWorkloads> workloads = kube::ReadClusterWorkloads(*c->kube);
    if (!workloads.ok()) {
      none.unavailable = WhyUnread(workloads.status());
      return none;
    }
    core::DrainForecast forecast = core::ForecastPlanDrains(plan, *workloads, force);
    if (forecast.nodes.empty() && forecast.legacy_steps.empty()) return std::nullopt;
    return forecast;
  };
}

}  // namespace tr::reconciler
