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
  node.boot_id = NewUuid();
  ++node.boots;
  ++node.epoch;
  node.events.clear();
  node.next_event_seq = 1;
  node.resources.clear();
  node.cosi_log.clear();
  node.services.clear();
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

absl::StatusOr<std::shared_ptr<Mailbox<ProgressItem>>> SimCluster::LifecycleUpgrade(
    SimNode& node, std::string image) {
  std::lock_guard lock(mu_);
  if (image.empty()) return absl::InvalidArgumentError("installer image name is required");
  if (node.installing) {
    return absl::FailedPreconditionError("another installation/upgrade is already in progress");
  }
  node.installing = true;
  JournalStateLocked(node, "install", fmt::format("start {}", image));
  auto box = std::make_shared<Mailbox<ProgressItem>>();
  box->Push(ProgressItem::Message(fmt::format("pulling installer image {}", image)));
  const uint64_t generation = node.generation;
  SimNode* n = &node;
  auto down = [box] {
    box->Push(ProgressItem::Error(absl::UnavailableError("connection closed: node is rebooting")));
    box->Close();
  };
  scheduler_->After(Scaled(timings_.image_pull), [this, n, generation, box, image, down] {
    std::lock_guard inner(mu_);
    if (stopping_ || n->generation != generation) return down();
    auto tag = ValidateImageLocked(*n, image, true);
    if (!tag.ok()) {
      n->installing = false;
      JournalStateLocked(*n, "install",
                         fmt::format("failed: {}", std::string(tag.status().message())));
      box->Push(ProgressItem::Message(
          fmt::format("error pulling installer image: {}", std::string(tag.status().message()))));
      box->Push(ProgressItem::Exit(1));
      box->Close();
      return;
    }
    const char slot = n->active_slot == 0 ? 'B' : 'A';
    box->Push(ProgressItem::Message(fmt::format("installing {} to boot slot {}", *tag, slot)));
    scheduler_->After(Scaled(timings_.install), [this, n, generation, box, tag = *tag, down] {
      std::lock_guard inner2(mu_);
      if (stopping_ || n->generation != generation) return down();
      const int inactive = 1 - n->active_slot;
      n->slots[inactive] = tag;
      n->next_boot_slot = inactive;
      n->installing = false;
      JournalStateLocked(*n, "slot",
                         fmt::format("{} installed in slot {}", tag, inactive == 0 ? 'A' : 'B'));
      box->Push(ProgressItem::Message("upgrade complete; reboot to activate the new version"));
      box->Push(ProgressItem::Exit(0));
      box->Close();
      NotifyLocked();
    });
  });
  return box;
}

std::shared_ptr<Mailbox<ProgressItem>> SimCluster::PullImage(SimNode& node, std::string image) {
  std::lock_guard lock(mu_);
  auto box = std::make_shared<Mailbox<ProgressItem>>();
  JournalStateLocked(node, "pull", image);
  const uint64_t generation = node.generation;
  SimNode* n = &node;
  const std::string layer = "sha256:" + std::string(16, 'a');
  box->Push(ProgressItem::Layer(layer, 0, 0, 52'428'800));
  scheduler_->After(Scaled(timings_.image_pull), [this, n, generation, box, image, layer] {
    std::lock_guard inner(mu_);
    if (stopping_ || n->generation != generation) {
      box->Push(
          ProgressItem::Error(absl::UnavailableError("connection closed: node is rebooting")));
    } else if (auto tag = ValidateImageLocked(*n, image, false); !tag.ok()) {
      box->Push(ProgressItem::Error(absl::UnknownError(fmt::format(
          "failed to pull image \"{}\": {}", image, std::string(tag.status().message())))));
    } else {
      box->Push(ProgressItem::Layer(layer, 1, 52'428'800, 52'428'800));
      box->Push(ProgressItem::Layer(layer, 3, 52'428'800, 52'428'800));
      box->Push(ProgressItem::Name(image));
    }
    box->Close();
  });
  return box;
}

}  // namespace tr::sim
