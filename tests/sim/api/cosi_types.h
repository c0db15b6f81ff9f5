// Which COSI resource types and namespaces exist on a Talos node (see cosi_types.cc for the
// source).
// Pure; thread-safe.
#pragma once

#include <string_view>

namespace tr::sim {

// Whether `type` ("MachineStatuses.runtime.talos.dev") is a resource type Talos 1.`talos_minor`
// defines. apid refuses any other with PermissionDenied `resource type "<type>" is not
// supported`.
bool KnownCosiType(std::string_view type, int talos_minor);

// Whether Talos 1.`talos_minor` registers the resource namespace `ns` ("runtime", "network", ...).
// apid refuses any other with PermissionDenied `namespace "<ns>" is not supported`.
bool KnownCosiNamespace(std::string_view ns, int talos_minor);

}  // namespace tr::sim
