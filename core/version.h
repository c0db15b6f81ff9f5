// Versions of Talos and Kubernetes: parsing, ordering and minor arithmetic.
//
// Talos reports its version as a `git describe` tag: release builds are exact tags such as
// `v1.11.6`, development builds look like `v1.12.0-alpha.1-23-g1a2b3c4d` with an optional
// `-dirty`. Kubernetes versions are plain semver (`1.35.0`, `v1.37.0-rc.0`). Both parse into
// `Version`; order follows semver, and a development build sorts after the tag it describes.
//
// Values only; thread-compatible.
#pragma once

#include <compare>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tr::core {

// A major.minor pair, the unit of the support matrix and of Kubernetes upgrade steps.
struct MinorVersion {
  int major = 0;
  int minor = 0;

  auto operator<=>(const MinorVersion&) const = default;
  // "1.35".
  std::string ToString() const;
  // The next minor of the same major: 1.35 -> 1.36.
  MinorVersion Next() const { return {major, minor + 1}; }
};

// Minors from `from` to `to` within one major (negative when `to` is older). Minors of
// different majors are not comparable this way; the result is then INT_MAX or INT_MIN.
int MinorDistance(MinorVersion from, MinorVersion to);

struct Version {
  int major = 0;
  int minor = 0;
  int patch = 0;
  std::string prerelease;     // "alpha.1", "rc.0"; empty for a release
  int commits_since_tag = 0;  // from a describe suffix "-23-g1a2b3c4d"; 0 for a tag
  std::string commit;         // abbreviated commit of a describe suffix; empty for a tag
  bool dirty = false;         // "-dirty" suffix

  MinorVersion Minor() const { return {major, minor}; }
  bool IsRelease() const { return prerelease.empty() && commits_since_tag == 0 && !dirty; }
  // The semver core with its prerelease, no leading "v": "1.12.0-alpha.1".
  std::string ToString() const;
  // What Talos reports for an exact build: "v" + the full describe string.
  std::string Tag() const;

  // Semver order; then a build N commits after a tag sorts after that tag; dirty last.
  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const { return (*this <=> other) == 0; }
};

// Parses a Talos version with or without the leading "v", including describe suffixes.
// InvalidArgument with the reason on anything else ("1.11", "v1.x.0", "").
absl::StatusOr<Version> ParseTalosVersion(std::string_view text);

// Parses a Kubernetes version ("1.35.0", "v1.35.0", "1.37.0-rc.0"). No describe suffix.
absl::StatusOr<Version> ParseKubernetesVersion(std::string_view text);

// Parses "1.35" (or "v1.35") into a minor.
absl::StatusOr<MinorVersion> ParseMinorVersion(std::string_view text);

}  // namespace tr::core
