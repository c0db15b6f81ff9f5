// Decoding of an `updates` mapping, shared by reconciler.yaml (updates) and ClusterProfile
// (spec.updates): the keys a file sets, each validated; docs/proposals.md lists the rules.
//
// Not thread-safe per DecodeContext (see yaml_decode.h); otherwise pure.
#pragma once

#include "core/profile_set_types.h"
#include "core/update_policy.h"
#include "core/yaml_decode.h"

namespace tr::core {

// The keys `field` sets. Problems go to field.ctx; the keys that decoded are still returned.
// An absent field gives empty overrides.
UpdatePolicyOverrides DecodeUpdatePolicy(const Field& field, const ValidationOptions& options);

}  // namespace tr::core
