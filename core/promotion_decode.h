// Decoding and validating `spec.promotion` (profile.h Promotion): the clusters a profile
// waits for and how long they must soak. Names are checked against each other only once the
// whole repository is read: every name must be a profile of the repository, and the
// "after" relation must have no cycle.
//
// Not thread-safe per DecodeContext (see yaml_decode.h); otherwise pure.
#pragma once

#include <optional>

#include "core/profile.h"
#include "core/profile_set_types.h"
#include "core/yaml_decode.h"

namespace tr::core {

// The promotion `field` describes; nullopt after reporting its problems to field.ctx.
std::optional<Promotion> DecodePromotion(const Field& field);

// Moves every valid profile whose promotion names an unknown cluster (no clusters/<name>.yaml)
// or takes part in a cycle to `set.invalid`, with a diagnostic at the offending name.
void ValidatePromotions(ProfileSet& set);

}  // namespace tr::core
