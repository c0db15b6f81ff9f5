// Reading YAML without yaml-cpp's throwing "zombie" nodes: the fleet file and the machine
// configuration documents are read with this.
#pragma once

#include "yaml-cpp/yaml.h"

namespace tr::sim {

// n[key] when n is a map that has it, else an undefined node.
inline YAML::Node YamlChild(const YAML::Node& n, const char* key) {
  if (n && n.IsMap() && n[key]) return n[key];
  return YAML::Node(YAML::NodeType::Undefined);
}

}  // namespace tr::sim
