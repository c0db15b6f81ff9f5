// The apiVersion of everything the reconciler reads or writes in YAML or JSON: profiles,
// reconciler.yaml, the status files, and the plan and status reports. A change to the shape of
// one of them is recorded in CHANGELOG.md, and its test pins the shape.
#pragma once

#include <string_view>

namespace tr::core {

inline constexpr std::string_view kApiVersion = "talos-reconciler.dev/v1alpha1";

}  // namespace tr::core
