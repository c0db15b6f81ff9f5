// The prober of each type of health check (core/health_check.h), registered by the type's
// name. Every type of core::HealthCheckSpec is registered with its overload of Probe
// (probes.h), found through the type, so a new type needs no line here; RegisterProber adds
// one for a type outside that list.
//
// Thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "core/profile.h"
#include "reconciler/operations/gates/probes.h"

namespace tr::reconciler::gates {

// Answers one check of its type, within the check's timeout.
using Prober = std::function<ProbeAnswer(const core::HealthCheck& check, const ProbeScope& scope)>;

// The prober of checks of `type`; an empty function when none is registered.
Prober ProberFor(std::string_view type);

// Adds the prober of `type`; AlreadyExists when the type has one.
absl::Status RegisterProber(std::string type, Prober prober);

}  // namespace tr::reconciler::gates
