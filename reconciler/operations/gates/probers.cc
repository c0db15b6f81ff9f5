#include "reconciler/operations/gates/probers.h"

#include <map>

#include "base/mutex.h"

namespace tr::reconciler::gates {
namespace {

ProbeAnswer ProbeClusterWorkloads(const core::HealthCheck& check, const ProbeScope& scope) {
  absl::StatusOr<ClusterClients> clients = scope.clients.ForProfile(scope.profile);
  if (!clients.ok()) return {false, "no answer: " + std::string(clients.status().message())};
  if (!clients->kube) return {false, "no answer: the cluster's Kubernetes API is not reachable yet"};
  return ProbeKubernetes(check, *clients->kube);
}

struct ProberRegistry {
  Mutex mu;
  std::map<std::string, Prober, std::less<>> by_type ABSL_GUARDED_BY(mu);
};

// Every type's prober, one line each.
ProberRegistry& Registry() {
  static ProberRegistry* registry = [] {
    auto* r = new ProberRegistry;
    MutexLock lock(r->mu);
    r->by_type = {
        {std::string(core::HttpCheck::kType),
         [](const core::HealthCheck& c, const ProbeScope&) { return ProbeHttp(c); }},
        {std::string(core::PrometheusCheck::kType),
         [](const core::HealthCheck& c, const ProbeScope&) { return ProbePrometheus(c); }},
        {std::string(core::KubernetesCheck::kType), ProbeClusterWorkloads},
    };
    return r;
  }();
  return *registry;
}

}  // namespace

Prober ProberFor(std::string_view type) {
  ProberRegistry& registry = Registry();
  MutexLock lock(registry.mu);
  const auto it = registry.by_type.find(type);
  return it == registry.by_type.end() ? Prober() : it->second;
}

absl::Status RegisterProber(std::string type, Prober prober) {
  ProberRegistry& registry = Registry();
  MutexLock lock(registry.mu);
  if (!registry.by_type.emplace(type, std::move(prober)).second) {
    return absl::AlreadyExistsError("health checks of type " + type + " have a prober");
  }
  return absl::OkStatus();
}

}  // namespace tr::reconciler::gates
