// Builders for profiles and observations in planner and rollout tests.
#pragma once

#include <string>
#include <vector>

#include "core/observed.h"
#include "core/profile.h"
#include "core/rollout.h"

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

// A schematic profile of FiveNodes on 1.11.6 asking for 1.12.0, whose w-1 (a GPU worker) has a
// schematic of its own, both resolved: "f.test/metal-installer/<64 b>" and ".../gpu".
inline ClusterProfile GpuWorkerProfile(const std::vector<NodeDef>& nodes) {
  ClusterProfile profile = MakeProfile(nodes, "1.12.0", "1.35.0");
  profile.talos_factory = FactoryInstaller{};
  profile.talos_image = "f.test/metal-installer/" + std::string(64, 'b');
  profile.talos_schematic_id = std::string(64, 'b');
  profile.nodes[4].schematic = Schematic{};
  profile.nodes[4].talos_image = "f.test/metal-installer/gpu";
  profile.nodes[4].talos_schematic_id = std::string(64, 'd');
  return profile;
}

// The memory of a rollout that asked `node` to upgrade to `target` at `now`, its deadline 30
// minutes later.
inline RolloutMemory NodeInFlight(const std::string& node, std::string_view target, TimePoint now) {
  OperationInFlight op;
  op.node = node;
  op.target = V(target);
  op.phase = OperationPhase::kUpgradeCalled;
  op.started = now;
  op.deadline = now + std::chrono::minutes(30);
  RolloutMemory memory;
  memory.in_flight.push_back(op);
  return memory;
}

}  // namespace tr::core::testing_fixtures
