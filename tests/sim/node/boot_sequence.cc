// Boot of a simulated node: slot selection (A/B fallback on a fatal boot error while armed), a fresh boot id and
// event buffer, the initialize and boot sequences, services starting, then readiness once the
// Kubernetes node is Ready.
#include "fmt/format.h"
#include "machine/machine.pb.h"
#include "tests/sim/common/ids.h"
#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {
namespace {

const std::vector<std::string>& BaseServices() {
  static const std::vector<std::string> services = {"apid",  "containerd", "cri",    "machined",
                                                    "udevd", "syslogd",    "auditd", "dashboard"};
  return services;
}

char SlotName(int slot) { return slot == 0 ? 'A' : 'B'; }

}  // namespace

void SimCluster::BootUpLocked(SimNode& node, bool instant) {
  if (node.next_boot_slot) {
    node.active_slot = *node.next_boot_slot;
    node.next_boot_slot.reset();
  }
  // Talos reverts only on a fatal error while the installer's META "upgrade" tag is set
  // (machined main.go handle -> revert.go); the reverted boot is modelled as this same boot.
  if (node.fallback_slot && FireFaultLocked(node, FaultKind::kBootFailure, "")) {
    const int failed = node.active_slot;
    node.active_slot = *node.fallback_slot;
    node.fallback_slot.reset();
    JournalStateLocked(node, "boot-failure",
                       fmt::format("fatal boot error on slot {} ({}); reverted to slot {}",
                                   SlotName(failed), node.slots[failed],
                                   SlotName(node.active_slot)));
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
      fmt::format("boot {} slot {} {}", node.boots, SlotName(node.active_slot), node.tag));
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
  // Not Ready is not a fatal error: Talos keeps the new slot and the fallback armed.
  if (node.fallback_slot && FireFaultLocked(node, FaultKind::kNeverReady, "")) return;
  AfterLocked(node, Scaled(timings_.boot) / 2, [this](SimNode& n) { ReadyLocked(n); });
}

void SimCluster::ReadyLocked(SimNode& node) {
  node.kube_ready = true;
  node.kube_resource_version = NextResourceVersionLocked();
  for (auto& pod : pods_) {
    if (pod.node == node.spec.name) pod.ready = true;
    if (pod.avoid_node == node.spec.name) pod.avoid_node.clear();
  }
  JournalStateLocked(node, "kube-ready", "Ready=True");
  SchedulePendingLocked();
  if (node.talos_cordoned) {
    node.talos_cordoned = false;
    CordonLocked(node, false, "talos");
  }
  SetStageLocked(node, MachineStage::kRunning, true, {});
  // Running and Ready commits the new slot (talos DropUpgradeFallbackController).
  if (node.fallback_slot) {
    node.fallback_slot.reset();
    JournalStateLocked(node, "fallback", "dropped: running and ready");
  }
}

}  // namespace tr::sim
