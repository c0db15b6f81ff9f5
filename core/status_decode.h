// Reading `status/<cluster>.yaml` back (the format RenderStatusYaml writes, status_yaml.h) with
// the strict YAML reader and decoders, so a restarted reconciler resumes from what it recorded.
//
// Pure; thread-compatible.
#pragma once

#include <string_view>

#include "core/decoded.h"
#include "core/status_types.h"

namespace tr::core {

// Reads what RenderStatusYaml writes. Keys it does not know, at any depth but in `fence`, are
// ignored: a newer build writes them (docs/upgrading.md), and an error would make the cluster
// start without memory. Everything else is checked strictly (the status branch is writable by
// others), the fence's keys too: a fence this build cannot fully read is none it can honour.
Decoded<ClusterStatus> DecodeClusterStatus(std::string_view path, std::string_view content);

}  // namespace tr::core
