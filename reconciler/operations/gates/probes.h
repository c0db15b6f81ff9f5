// The probes behind policy.healthChecks: one HTTP request each, answered as healthy or not
// with the reason in words. `http`: GET the URL; healthy when the status equals expectStatus.
// Redirects are not followed (a 302 is an answer, not a pass); https verifies the server's
// certificate and host name against caFile, or the system's CAs when none is given.
// `prometheus`: an instant query through the HTTP API (GET <url>/api/v1/query); healthy when
// the result is a single number (a scalar, or a vector of exactly one series) that is not
// NaN and, when max is set, at most max. No result, several series, NaN or an API error is
// not healthy, and the message says which.
//
// `kubernetes`: the named workloads (one by name, or all that match a label selector) in the
// cluster's Kubernetes API must have rolled out (core/workload_readiness.h); none matching, or
// the API not answering, is not healthy.
//
// Each probe connects, sends and reads within the check's timeout per step, and reads at
// most 1 MiB of an answer (an `http` probe needs only the status; a longer Prometheus answer
// is unhealthy). The answer message never contains the response body beyond a short,
// printable excerpt.
//
// Each type of check (core::HealthCheckSpec) has its probe here as an overload of `Probe`
// for the type: probers.cc registers, for every type of HealthCheckSpec, the overload that
// takes it, so a type without one does not compile.
//
// Thread-safe: probes share no state.
#pragma once

#include <optional>
#include <string>

#include "core/profile.h"
#include "reconciler/clients/cluster_clients.h"
#include "reconciler/clients/kube/kube_client.h"

namespace tr::reconciler::gates {

struct ProbeAnswer {
  bool healthy = false;
  std::string message;  // "HTTP 200", "HTTP 503, expected 200", "value 3 > max 0", ...
};

ProbeAnswer ProbeHttp(const core::HealthCheck& check);
ProbeAnswer ProbePrometheus(const core::HealthCheck& check);
// The verdict on one Prometheus query answer (`http_status`, `body`): healthy when it is a
// success holding one number, at most `max_value` when given. Any other shape is unhealthy
// with the reason, never an exception.
ProbeAnswer PrometheusVerdict(int http_status, const std::string& body,
                              std::optional<double> max_value);

ProbeAnswer ProbeKubernetes(const core::HealthCheck& check, kube::KubeClient& kube);

// What a probe may use besides the check: the profile it guards and the clients of its
// cluster (a kubernetes check asks the cluster's API).
struct ProbeScope {
  const core::ClusterProfile& profile;
  ClusterClientFactory& clients;
};

// The probe of each type, chosen by the type of the first argument, which is `check.spec`'s.
ProbeAnswer Probe(const core::HttpCheck& spec, const core::HealthCheck& check,
                  const ProbeScope& scope);
ProbeAnswer Probe(const core::PrometheusCheck& spec, const core::HealthCheck& check,
                  const ProbeScope& scope);
ProbeAnswer Probe(const core::KubernetesCheck& spec, const core::HealthCheck& check,
                  const ProbeScope& scope);

}  // namespace tr::reconciler::gates
