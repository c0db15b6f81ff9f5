#include "reconciler/operations/gates/health_gate_runner.h"

#include "reconciler/operations/gates/probers.h"

namespace tr::reconciler::gates {

ProbeAnswer ProbeGateRunner::Run(const core::ClusterProfile& profile,
                                 const core::HealthCheck& check) {
  const Prober prober = ProberFor(core::CheckType(check.spec));
  if (!prober) return {false, "no prober for type " + std::string(core::CheckType(check.spec))};
  return prober(check, {profile, clients_});
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
