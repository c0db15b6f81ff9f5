// Rewriting the versions in a profile's text, for release proposals: only the bytes of the
// version scalars change, so comments, key order, quoting and everything a person wrote stay
// as they were, and the pull request's diff is the version lines alone.
//
// Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/version.h"

namespace tr::core {

// `content` (a ClusterProfile) with spec.talos.version set to `talos` and
// spec.kubernetes.version to `kubernetes`, where given. A version written with a leading "v"
// keeps it. InvalidArgument when the file does not parse or a version is not a scalar.
absl::StatusOr<std::string> SetProfileVersions(std::string_view content,
                                               const std::optional<Version>& talos,
                                               const std::optional<Version>& kubernetes);

// `content` (a ClusterProfile) with spec.policy.paused set to `paused`: the scalar replaced when
// written, else a line added to spec.policy (or a spec.policy added to spec), indented as its
// neighbours. Everything else stays byte for byte. InvalidArgument when the file does not parse
// or spec or spec.policy is written in flow style ({...}), which this edit does not handle.
absl::StatusOr<std::string> SetProfilePaused(std::string_view content, bool paused);

}  // namespace tr::core
