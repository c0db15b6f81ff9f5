#include "core/observed.h"

#include "core/schematic.h"

namespace tr::core {

const NodeObservation* ObservedCluster::FindNode(std::string_view node_name) const {
  for (const NodeObservation& node : nodes) {
    if (node.name == node_name) return &node;
  }
  return nullptr;
}

std::optional<std::string> RunningSchematic(const NodeObservation& seen) {
  if (!seen.reachable || !seen.extensions_observed) return std::nullopt;
  return seen.schematic.value_or(std::string(kEmptySchematicId));
}

std::optional<std::string> LastSeenSchematic(const NodeObservation& seen) {
  if (seen.reachable && seen.extensions_observed) return RunningSchematic(seen);
  return seen.schematic;
}

}  // namespace tr::core
