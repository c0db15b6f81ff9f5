// Decoding and validation of `reconciler.yaml` (kind RepositoryDefaults): repository-wide policy
// defaults and additions to the support matrix and release catalog, read with the strict YAML
// reader like a profile (profile_decode.h). docs/profiles.md, "`reconciler.yaml`", lists every rule.
//
// Pure; thread-compatible.
#pragma once

#include <string_view>

#include "core/decoded.h"
#include "core/profile.h"
#include "core/profile_set_types.h"

namespace tr::core {

// Decodes `content`, the bytes of `reconciler.yaml` at `path`.
Decoded<RepositoryDefaults> DecodeRepositoryDefaults(std::string_view path,
                                                     std::string_view content,
                                                     const ValidationOptions& options = {});

}  // namespace tr::core
