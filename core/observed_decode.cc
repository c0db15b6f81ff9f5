#include "core/observed_decode.h"

#include "core/names.h"
#include "core/strict_yaml.h"
#include "core/yaml_decode.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

std::optional<MachineStage> ReadStage(const Field& field) {
  return ReadEnum<MachineStage>(field, {{"unknown", MachineStage::kUnknown},
                                        {"booting", MachineStage::kBooting},
                                        {"installing", MachineStage::kInstalling},
                                        {"maintenance", MachineStage::kMaintenance},
                                        {"running", MachineStage::kRunning},
                                        {"rebooting", MachineStage::kRebooting},
                                        {"shutting-down", MachineStage::kShuttingDown},
                                        {"resetting", MachineStage::kResetting},
                                        {"upgrading", MachineStage::kUpgrading}});
}

template <typename T>
void Set(std::optional<T> value, T& out) {
  if (value) out = *std::move(value);
}

NodeObservation DecodeNode(const FieldEntry& entry) {
  const Field& field = entry.value;
  NodeObservation node;
  node.name = entry.key;
  if (absl::Status s = CheckDns1123Subdomain(entry.key); !s.ok()) {
    entry.KeyError("node name " + std::string(s.message()));
  }
  MappingReader m(
      field, {"talos", "kubelet", "ready", "reachable", "schedulable", "etcdLeader", "etcdHealthy",
              "etcdMember", "bootId", "stage", "lastUpgradeDuration", "schematic"});
  if (!m.ok()) return node;
  node.talos = ReadTalosVersion(m.Optional("talos"));
  node.kubelet = ReadKubernetesVersion(m.Optional("kubelet"));
  Set(ReadBool(m.Optional("ready")), node.ready);
  Set(ReadBool(m.Optional("reachable")), node.reachable);
  Set(ReadBool(m.Optional("schedulable")), node.schedulable);
  Set(ReadBool(m.Optional("etcdLeader")), node.etcd_leader);
  Set(ReadBool(m.Optional("etcdHealthy")), node.etcd_healthy);
  Set(ReadBool(m.Optional("etcdMember")), node.etcd_member);
  Set(ReadString(m.Optional("bootId")), node.boot_id);
  Set(ReadStage(m.Optional("stage")), node.stage);
  node.last_upgrade_duration =
      ReadDuration(m.Optional("lastUpgradeDuration"), /*allow_zero=*/false);
  node.schematic = ReadChecked(m.Optional("schematic"), CheckSchematicId);
  return node;
}

ObservedCluster DecodeCluster(const FieldEntry& entry) {
  const Field& field = entry.value;
  ObservedCluster cluster;
  cluster.name = entry.key;
  if (absl::Status s = CheckDns1123Label(entry.key); !s.ok()) {
    entry.KeyError("cluster name " + std::string(s.message()));
  }
  MappingReader m(field, {"nodes", "self"});
  if (!m.ok()) return cluster;
  std::string leader;
  for (const FieldEntry& node_entry : ReadMapEntries(m.Required("nodes"))) {
    NodeObservation node = DecodeNode(node_entry);
    if (node.etcd_leader && !leader.empty()) {
      node_entry.KeyError(
          fmt::format("{} is already the etcd leader; a cluster has at most one", leader));
    } else if (node.etcd_leader) {
      leader = node.name;
    }
    cluster.nodes.push_back(std::move(node));
  }
  const Field self = m.Optional("self");
  if (std::optional<std::string> self_name = ReadString(self)) {
    if (cluster.FindNode(*self_name) == nullptr) {
      self.Error(fmt::format("\"{}\" is not one of this cluster's nodes", *self_name));
    }
    cluster.self_node = *self_name;
  }
  return cluster;
}

}  // namespace

const ObservedCluster* ObservedFleet::FindCluster(std::string_view name) const {
  for (const ObservedCluster& cluster : clusters) {
    if (cluster.name == name) return &cluster;
  }
  return nullptr;
}

Decoded<ObservedFleet> DecodeObservedFleet(std::string_view path, std::string_view content) {
  return DecodeYamlDocument<ObservedFleet>(path, content, [](const Field& root) {
    MappingReader top(root, {"clusters"});
    ObservedFleet fleet;
    for (const FieldEntry& entry : ReadMapEntries(top.Required("clusters"))) {
      fleet.clusters.push_back(DecodeCluster(entry));
    }
    return fleet;
  });
}

}  // namespace tr::core
