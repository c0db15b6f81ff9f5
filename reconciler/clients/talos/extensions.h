// What a node's `ExtensionStatuses.runtime.talos.dev` resources say: the system extensions of
// the image it booted, and among them the virtual extension `schematic` that every image an
// Image Factory builds carries, whose version is the schematic's ID (docs/talos-api.md,
// "The schematic a node runs").
//
// Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reconciler/clients/talos/talos_types.h"

namespace tr::reconciler::talos {

inline constexpr char kRuntimeNamespace[] = "runtime";
inline constexpr char kExtensionStatusType[] = "ExtensionStatuses.runtime.talos.dev";

struct NodeExtensions {
  std::optional<std::string> schematic;  // a valid schematic ID, when the image has one
  std::vector<std::string> extensions;   // "name version", sorted; the schematic left out
};

// Reads each resource's spec (`metadata: {name, version}`) from its protobuf, or from its YAML
// when it has no protobuf; a spec that does not parse, or names nothing, is left out, and a
// `schematic` version that is not an ID is not one.
NodeExtensions ReadNodeExtensions(const std::vector<CosiResource>& resources);

}  // namespace tr::reconciler::talos
