// Builders for profiles and observations in planner and rollout tests.
#pragma once

#include <string>
#include <vector>

#include "core/observed.h"
#include "core/profile.h"

namespace tr::core::testing_fixtures {

inline Version V(std::string_view text) { return *ParseTalosVersion(text); }

struct NodeDef {
  std::string name;
  NodeRole role;
  std::string talos;
  std::string kubelet;
  bool leader = false;
};

inline ClusterProfile MakeProfile(const std::vector<NodeDef>& nodes, std::string_view talos,
                                  std::string_view kubernetes) {
  ClusterProfile p;
  p.name = "prod";
  p.file = "clusters/prod.yaml";
  p.credentials = "prod";
  p.talos_version = V(talos);
  p.kubernetes_version = V(kubernetes);
  p.talos_image = "factory.talos.dev/metal-installer/abc";
  int i = 0;
  for (const NodeDef& n : nodes) {
    p.nodes.push_back({n.name, "10.0.0." + std::to_string(++i), n.role});
    if (n.role == NodeRole::kControlPlane) p.endpoints.push_back(p.nodes.back().address);
  }
  return p;
}

inline ObservedCluster MakeObserved(const std::vector<NodeDef>& nodes, std::string self_node = "") {
  ObservedCluster o;
  o.name = "prod";
  o.self_node = std::move(self_node);
  for (const NodeDef& n : nodes) {
    NodeObservation seen;
    seen.name = n.name;
    seen.talos = V(n.talos);
    seen.kubelet = V(n.kubelet);
    seen.boot_id = "boot-" + n.name;
    seen.etcd_leader = n.leader;
    seen.etcd_member = n.role == NodeRole::kControlPlane;
    o.nodes.push_back(seen);
  }
  return o;
}

// Three control planes (cp-1 the etcd leader) and two workers on one version.
inline std::vector<NodeDef> FiveNodes(std::string talos, std::string kubelet) {
  return {{"cp-0", NodeRole::kControlPlane, talos, kubelet},
          {"cp-1", NodeRole::kControlPlane, talos, kubelet, true},
          {"cp-2", NodeRole::kControlPlane, talos, kubelet},
          {"w-0", NodeRole::kWorker, talos, kubelet},
          {"w-1", NodeRole::kWorker, talos, kubelet}};
}

}  // namespace tr::core::testing_fixtures
