// Rewriting the versions in a profile's text, for release proposals: only the bytes of the
// version scalars change, so comments, key order, quoting and everything a person wrote stay
// as they were, and the pull request's diff is the version lines alone.
//
// Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/version.h"

namespace tr::core {

// `content` (a ClusterProfile) with spec.talos.version set to `talos` and
// spec.kubernetes.version to `kubernetes`, where given. A version written with a leading "v"
// keeps it. InvalidArgument when the file does not parse or a version is not a scalar.
absl::StatusOr<std::string> SetProfileVersions(std::string_view content,
                                               const std::optional<Version>& talos,
                                               const std::optional<Version>& kubernetes);

// `content` with the scalar at `path` (keys from the top) set to `value` (YAML as it is to be
// written, quoted where it must be): the scalar replaced when written (plain, or quoted with no
// escapes), else the missing keys added as the first entry of the deepest mapping that exists,
// indented as its neighbours. Everything else stays byte for byte. InvalidArgument when the file
// does not parse, or the scalar or that mapping is written in a form this edit does not handle
// (flow style {...}, an empty mapping, escapes): the message says what to set by hand.
absl::StatusOr<std::string> SetProfileScalar(std::string_view content,
                                             const std::vector<std::string_view>& path,
                                             std::string_view value);

// spec.policy.paused set to `paused` (SetProfileScalar).
absl::StatusOr<std::string> SetProfilePaused(std::string_view content, bool paused);

// metadata.annotations["talos-reconciler.dev/retry"] set to `token`, quoted (SetProfileScalar).
absl::StatusOr<std::string> SetProfileRetry(std::string_view content, std::string_view token);

}  // namespace tr::core
