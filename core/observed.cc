#include "core/observed.h"

namespace tr::core {

const NodeObservation* ObservedCluster::FindNode(std::string_view node_name) const {
  for (const NodeObservation& node : nodes) {
    if (node.name == node_name) return &node;
  }
  return nullptr;
}

}  // namespace tr::core
