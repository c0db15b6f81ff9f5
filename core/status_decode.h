// Reading `status/<cluster>.yaml` back (the format RenderStatusYaml writes, status_yaml.h) with
// the strict YAML reader and decoders, so a restarted reconciler resumes from what it recorded.
//
// Pure; thread-compatible.
#pragma once

#include <string_view>

#include "core/decoded.h"
#include "core/status_types.h"

namespace tr::core {

// Reads what RenderStatusYaml writes. Unknown keys are errors: the status branch is ours.
Decoded<ClusterStatus> DecodeClusterStatus(std::string_view path, std::string_view content);

}  // namespace tr::core
