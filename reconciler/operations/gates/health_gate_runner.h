// Runs a profile's health checks (policy.healthChecks) for the rollout: the reconciler asks
// before it would start a node, and hands the answers to the rollout state machine
// (core/health_gates.h). An interface so the reconciler can be driven by a scripted runner in
// tests and by the real probes (probes.h) in the daemon.
//
// Thread-safety: implementations are safe to call from several threads (one cluster each).
#pragma once

#include <stop_token>
#include <vector>

#include "core/health_gates.h"
#include "core/profile.h"
#include "reconciler/clients/cluster_clients.h"
#include "reconciler/operations/gates/probes.h"

namespace tr::reconciler::gates {

class HealthGateRunner {
 public:
  virtual ~HealthGateRunner() = default;
  // One result per check of `profile.policy.healthChecks`, in order (`checked` is left for
  // the caller to stamp). Checks not run because `stop` was requested count as unhealthy.
  virtual std::vector<core::GateResult> Check(const core::ClusterProfile& profile,
                                              std::stop_token stop) = 0;
};

// The real checks, one after another, each bounded by its own timeout; kubernetes checks go
// through the cluster's Kubernetes client from `clients`.
class ProbeGateRunner final : public HealthGateRunner {
 public:
  explicit ProbeGateRunner(ClusterClientFactory& clients) : clients_(clients) {}
  std::vector<core::GateResult> Check(const core::ClusterProfile& profile,
                                      std::stop_token stop) override;

 private:
  ProbeAnswer Run(const core::ClusterProfile& profile, const core::HealthCheck& check);

  ClusterClientFactory& clients_;
};

}  // namespace tr::reconciler::gates
