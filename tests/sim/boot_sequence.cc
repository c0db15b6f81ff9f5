// Boot of a simulated node: slot selection (A/B fallback on a failed boot), a fresh boot id and
// event buffer, the initialize and boot sequences, services starting, then readiness once the
// Kubernetes node is Ready.
#include "fmt/format.h"
#include "machine/machine.pb.h"
#include "tests/sim/ids.h"
#include "tests/sim/sim_cluster.h"

namespace tr::sim {
namespace {

const std::vector<std::string>& BaseServices() {
  static const std::vector<std::string> services = {"apid",  "containerd", "cri",    "machined",
                                                    "udevd", "syslogd",    "auditd", "dashboard"};
  return services;
}

}  // namespace

void SimCluster::BootUpLocked(SimNode& node, bool instant) {
  if (node.next_boot_slot) {
    const int next = *node.next_boot_slot;
    node.next_boot_slot.reset();
    bool failed = false;
    for (auto& f : node.faults) {
      if (f.kind == FaultKind::kBootFailure && f.count != 0 && next != node.active_slot) {
        if (f.count > 0) --f.count;
        failed = true;
        break;
      }
    }
    if (failed) {
      JournalStateLocked(
          node, "boot-failure",
          fmt::format("slot {} ({}) failed to boot; back on slot {}", next == 0 ? 'A' : 'B',
                      node.slots[next], node.active_slot == 0 ? 'A' : 'B'));
    } else {
      node.active_slot = next;
    }
  }
  if (!node.staged_config.empty()) {
    node.machine_config = std::move(node.staged_config);
    node.staged_config.clear();
  }
  const std::string old_tag = node.tag;
  node.tag = node.slots[node.active_slot];
  node.image = node.slot_images[node.active_slot];
  node.boot_id = NewUuid();
  ++node.boots;
  ++node.epoch;
  node.events.clear();
  node.next_event_seq = 1;
  node.resources.clear();
  node.cosi_log.clear();
  node.services.clear();
  // The system containerd keeps its images in memory: a boot starts it empty. The CRI
  // containerd's live on the EPHEMERAL partition, unless that was wiped.
  node.image_store.erase(ImageStore::kSystemInMemory);
  const bool first_boot = node.boots == 1;  // the fleet's start: nothing to wipe yet
  if (!first_boot && FireFaultLocked(node, FaultKind::kEphemeralWiped, "")) {
    node.image_store.clear();
  }
  node.installing = false;
  node.up = true;
  node.stuck_down = false;
  JournalStateLocked(
      node, "up",
      fmt::format("boot {} slot {} {}", node.boots, node.active_slot == 0 ? 'A' : 'B', node.tag));
  if (old_tag != node.tag)
    JournalStateLocked(node, "version", fmt::format("{} -> {}", old_tag, node.tag));
  if (instant) {
    node.stage = MachineStage::kBooting;
    return;
  }
  node.forwardable_from = scheduler_->Now() + Scaled(timings_.apid_reconnect);
  node.forward_hangs_until = scheduler_->Now() + Scaled(timings_.apid_hang);
  node.sequence = "boot";
  SequenceEventLocked(node, "initialize", machine::SequenceEvent::START, "");
  SetStageLocked(node, MachineStage::kBooting, false,
                 {"time", "network", "services", "staticPods", "nodeReady"});
  for (const auto& id : BaseServices()) SetServiceLocked(node, id, "Running", true);
  SequenceEventLocked(node, "initialize", machine::SequenceEvent::STOP, "");
  SequenceEventLocked(node, "boot", machine::SequenceEvent::START, "");
  SetServiceLocked(node, "kubelet", "Starting", false);
  if (node.is_control_plane()) {
    SetServiceLocked(node, "trustd", "Running", true);
    SetServiceLocked(node, "etcd", "Preparing", false);
  }
  RefreshResourcesLocked(node);
  AfterLocked(node, Scaled(timings_.boot) / 2, [this](SimNode& n) { BootedLocked(n); });
  NotifyLocked();
}

void SimCluster::BootedLocked(SimNode& node) {
  for (const auto& id : BaseServices()) SetServiceLocked(node, id, "Running", true);
  SetServiceLocked(node, "kubelet", "Running", true);
  if (node.is_control_plane()) {
    SetServiceLocked(node, "trustd", "Running", true);
    SetServiceLocked(node, "etcd", "Running", !node.HasFault(FaultKind::kEtcdUnhealthy));
  }
  if (node.sequence == "boot") {
    SequenceEventLocked(node, "boot", machine::SequenceEvent::STOP, "");
    node.sequence.clear();
  }
  ElectLeaderLocked();
  SetStageLocked(node, MachineStage::kRunning, false, {"nodeReady"});
  AfterLocked(node, Scaled(timings_.boot) / 2, [this](SimNode& n) { ReadyLocked(n); });
}

void SimCluster::ReadyLocked(SimNode& node) {
  node.kube_ready = true;
  node.kube_resource_version = NextResourceVersionLocked();
  for (auto& pod : pods_) {
    if (pod.node == node.spec.name) pod.ready = true;
  }
  JournalStateLocked(node, "kube-ready", "Ready=True");
  if (node.talos_cordoned) {
    node.talos_cordoned = false;
    CordonLocked(node, false, "talos");
  }
  SetStageLocked(node, MachineStage::kRunning, true, {});
}

}  // namespace tr::sim
