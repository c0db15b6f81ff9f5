// The prober of each type of health check (core/health_check.h), registered by the type's
// name: the one place that knows which probe answers which type. A new type's prober is a
// probe (probes.h, or a file of its own) and one line in the table of probers.cc.
//
// Thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "core/profile.h"
#include "reconciler/clients/cluster_clients.h"
#include "reconciler/operations/gates/probes.h"

namespace tr::reconciler::gates {

// What a prober may use besides the check: the profile it guards and the clients of its
// cluster (a kubernetes check asks the cluster's API).
struct ProbeScope {
  const core::ClusterProfile& profile;
  ClusterClientFactory& clients;
};

// Answers one check of its type, within the check's timeout.
using Prober = std::function<ProbeAnswer(const core::HealthCheck& check, const ProbeScope& scope)>;

// The prober of checks of `type`; an empty function when none is registered.
Prober ProberFor(std::string_view type);

// Adds the prober of `type`; AlreadyExists when the type has one.
absl::Status RegisterProber(std::string type, Prober prober);

}  // namespace tr::reconciler::gates
