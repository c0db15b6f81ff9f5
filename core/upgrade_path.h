// The version path of a cluster: the ordered Talos and Kubernetes hops from the versions the
// nodes run to the desired ones, each intermediate pair supported (docs/architecture.md).
//
// Pure; thread-compatible.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/profile.h"
#include "core/support_matrix.h"
#include "core/version.h"

namespace tr::core {

struct VersionHop {
  bool talos = true;  // a Talos hop; otherwise a Kubernetes one
  Version from;
  Version to;
};

// The versions a component passes through from `from` to `to`, both included: one minor at a
// time, the latest known patch of each minor in between. `latest` maps a minor to its latest
// release (nullopt when unknown). FailedPrecondition naming the missing minor when the catalog
// lacks one; InvalidArgument across a major version.
absl::StatusOr<std::vector<Version>> VersionStops(
    const Version& from, const Version& to, std::string_view component,
    const std::function<std::optional<Version>(MinorVersion)>& latest);

// The hops from (talos[0], kubernetes[0]) to (talos.back(), kubernetes.back()), preferring
// `order` whenever both moves keep a safe path. FailedPrecondition with a message a person can
// act on when no order of hops keeps every pair supported.
absl::StatusOr<std::vector<VersionHop>> FindUpgradePath(const std::vector<Version>& talos,
                                                        const std::vector<Version>& kubernetes,
                                                        UpgradeOrder order,
                                                        const SupportMatrix& matrix);

}  // namespace tr::core
