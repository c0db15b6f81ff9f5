// Decoding and validation of `clusters/<name>.yaml` (kind ClusterProfile); `reconciler.yaml` is
// repository_defaults_decode.h. Both are read with the strict YAML reader (strict_yaml.h), and
// every independent problem is reported as a Diagnostic (`file:line:column: field.path:
// message`), up to kMaxDiagnosticsPerFile per file. docs/profiles.md lists every rule.
//
// Pure; thread-compatible.
#pragma once

#include <string_view>

#include "core/api_version.h"
#include "core/decoded.h"
#include "core/profile.h"
#include "core/profile_set_types.h"
#include "core/schematic_decode.h"

namespace tr::core {

// The cluster name a profile path implies: "clusters/prod-eu-1.yaml" -> "prod-eu-1"
// (the base name without ".yaml" or ".yml").
std::string ClusterNameFromPath(std::string_view path);

// Decodes `content`, the bytes of the profile at `path`. On success the profile's `policy` is
// Policy{} merged with `defaults` and then with the file's own policy keys. Schematic file
// references are looked up in `schematic_files`; the errors of a referenced file follow the
// profile's own diagnostics and name that file. talos_factory->factory is left as written
// (empty when not): DecodeProfileSet fills reconciler.yaml's imageFactory in.
Decoded<ClusterProfile> DecodeClusterProfile(std::string_view path, std::string_view content,
                                             const PolicyOverrides& defaults,
                                             const ValidationOptions& options = {},
                                             const SchematicFiles& schematic_files = {});

}  // namespace tr::core
