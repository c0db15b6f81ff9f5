// Decoding of a `policy` mapping, shared by ClusterProfile (spec.policy) and reconciler.yaml
// (policy): the keys a file sets, each validated; see docs/profiles.md for the rules.
//
// Not thread-safe per DecodeContext (see yaml_decode.h); otherwise pure.
#pragma once

#include "core/profile.h"
#include "core/profile_set_types.h"
#include "core/yaml_decode.h"

namespace tr::core {

// The keys `field` sets. Problems go to field.ctx; the keys that decoded are still returned.
// An absent field gives empty overrides.
PolicyOverrides DecodePolicy(const Field& field, const ValidationOptions& options);

// An IANA time-zone name, checked with options.is_known_timezone when set.
std::optional<std::string> DecodeTimezone(const Field& field, const ValidationOptions& options);

}  // namespace tr::core
