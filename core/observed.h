// What the nodes of a cluster really run, as observed through the Talos and Kubernetes APIs
// (or, for the offline `plan` command, read from an observed-state YAML file).
//
// Values only; thread-compatible.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/pending_mark.h"
#include "core/version.h"

namespace tr::core {

// MachineStatus stage, numbered as the Talos API's MachineStatusEvent.MachineStage.
enum class MachineStage {
  kUnknown = 0,
  kBooting = 1,
  kInstalling = 2,
  kMaintenance = 3,
  kRunning = 4,
  kRebooting = 5,
  kShuttingDown = 6,
  kResetting = 7,
  kUpgrading = 8,
};

struct NodeObservation {
  std::string name;
  bool reachable = true;
  std::optional<Version> talos;    // Version.tag; unset when unreachable
  std::optional<Version> kubelet;  // Node status.nodeInfo.kubeletVersion
  std::string boot_id;             // /proc/sys/kernel/random/boot_id; empty when unknown
  MachineStage stage = MachineStage::kRunning;
  bool ready = true;         // MachineStatus ready and Kubernetes node Ready
  bool schedulable = true;   // Kubernetes node not cordoned
  bool etcd_member = false;  // control planes: listed as a voting (non-learner) member
  bool etcd_healthy = true;  // control planes: EtcdStatus without errors
  bool etcd_leader = false;
  // How long this node's last Talos upgrade took, from call to healthy, when known.
  std::optional<std::chrono::seconds> last_upgrade_duration;
  // The Image Factory schematic ID of the image the node booted (its `schematic` extension);
  // unset when not observed, or when the image was not built by a factory.
  std::optional<std::string> schematic;
  // The system extensions the node runs, as "name version" (the `schematic` one left out).
  std::vector<std::string> extensions;
  // False when the node's extensions could not be read this time: `schematic` and
  // `extensions` then say nothing (not "none").
  bool extensions_observed = true;
  // The Node's pending-install annotation (core/pending_mark.h), when it parses: a version
  // written to the node's inactive slot ahead of its reboot. Read only while the node answers.
  std::optional<PendingInstallMark> pending_mark;
  // Read from a live MachineStatus watch rather than asked: the watch's end (the node going
  // down) and the node turning ready wake the cluster, as a node's events do.
  bool watched = false;
};

// The schematic the node runs, an image no factory built (the vanilla installer before 1.14)
// being the empty schematic; nullopt when the node does not answer or its extensions could not
// be read.
std::optional<std::string> RunningSchematic(const NodeObservation& seen);

// What a report says the node runs: RunningSchematic while it answers with its extensions;
// otherwise the schematic it last ran (status.h WithLastKnownVersions fills that in as
// `schematic`), nullopt when none was ever read. Never a rollout's proof that a node moved:
// that is RunningSchematic.
std::optional<std::string> LastSeenSchematic(const NodeObservation& seen);

struct ObservedCluster {
  std::string name;
  std::vector<NodeObservation> nodes;
  std::string self_node;  // the node the reconciler runs on; empty when none of these
  // False when the look left etcd out (FleetObserver::ObserveWithoutEtcd): the control
  // planes' etcd_member, etcd_healthy and etcd_leader then say nothing.
  bool etcd_observed = true;

  const NodeObservation* FindNode(std::string_view node_name) const;
  NodeObservation* FindNode(std::string_view node_name) {
    return const_cast<NodeObservation*>(std::as_const(*this).FindNode(node_name));
  }
};

}  // namespace tr::core
