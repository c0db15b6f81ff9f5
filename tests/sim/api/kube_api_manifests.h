// What the fake Kubernetes API keeps of the bootstrap manifests' objects beyond their image
// (which SimCluster keeps, as it rolls pods out): whether each was deleted, its annotations, its
// generation, the field managers of its fields (managedFields), and Talos's inventory ConfigMap
// kube-system/talos-bootstrap-manifests-inventory. Served by kube_api_manifests.cc.
//
// Thread-compatible: guarded by the cluster's mutex (SimCluster::mu()).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"

namespace tr::sim {

// One field of an object: the keys from the root ("spec", "template", ...). A list is one field
// (this fake does not key list items by name as the API server does with `k:` entries).
using FieldPath = std::vector<std::string>;

struct BootstrapObjectState {
  bool deleted = false;
  int64_t generation = 1;
  std::map<std::string, std::string> annotations;
  // (manager, operation "Apply" | "Update") -> the fields it owns. Empty until first served:
  // then as Talos before 1.13 created it (manager `talos`, operation Update).
  std::map<std::pair<std::string, std::string>, std::set<FieldPath>> managers;
};

struct BootstrapObjects {
  std::map<std::string, BootstrapObjectState> objects;  // "daemonsets/kube-proxy"
  std::optional<nlohmann::json> inventory;              // the ConfigMap, once created
};

}  // namespace tr::sim
