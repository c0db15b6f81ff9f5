// Which COSI resource types exist on a Talos node (see cosi_types.cc for the source).
// Pure; thread-safe.
#pragma once

#include <string_view>

namespace tr::sim {

// Whether `type` ("MachineStatuses.runtime.talos.dev") is a resource type Talos defines.
bool KnownCosiType(std::string_view type);

}  // namespace tr::sim
