#include "reconciler/operations/gates/health_gate_runner.h"

namespace tr::reconciler::gates {

ProbeAnswer ProbeGateRunner::Run(const core::ClusterProfile& profile,
                                 const core::HealthCheck& check) {
  switch (check.kind) {
    case core::HealthCheck::Kind::kHttp:
      return ProbeHttp(check);
    case core::HealthCheck::Kind::kPrometheus:
      return ProbePrometheus(check);
    case core::HealthCheck::Kind::kKubernetes:
      break;
  }
  absl::StatusOr<ClusterClients> clients = clients_.ForProfile(profile);
  if (!clients.ok()) return {false, "no answer: " + std::string(clients.status().message())};
  if (!clients->kube) return {false, "no answer: the cluster's Kubernetes API is not reachable yet"};
  return ProbeKubernetes(check, *clients->kube);
}

std::vector<core::GateResult> ProbeGateRunner::Check(const core::ClusterProfile& profile,
                                                     std::stop_token stop) {
  std::vector<core::GateResult> results;
  for (const core::HealthCheck& check : profile.policy.health_checks) {
    core::GateResult r;
    r.name = check.name;
    if (stop.stop_requested()) {
      r.message = "not checked: stopping";
    } else {
      ProbeAnswer answer = Run(profile, check);
      r.healthy = answer.healthy;
      r.message = std::move(answer.message);
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace tr::reconciler::gates
