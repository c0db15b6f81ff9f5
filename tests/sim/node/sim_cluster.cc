#include "tests/sim/node/sim_cluster.h"

#include <algorithm>

#include "core/version.h"
#include "fmt/format.h"
#include "machine/machine.pb.h"
#include "tests/sim/common/ids.h"

namespace tr::sim {

bool SimNode::api_reachable() const { return up && !HasFault(FaultKind::kApiUnreachable); }

bool SimNode::HasFault(FaultKind kind) const {
  return std::any_of(faults.begin(), faults.end(),
                     [&](const Fault& f) { return f.kind == kind && f.count != 0; });
}

int TalosMinor(const SimNode& node) {
  auto v = core::ParseTalosVersion(node.tag);
  return v.ok() ? v->minor : 0;
}

std::string_view MachineStageName(MachineStage stage) {
  return machine::MachineStatusEvent::MachineStage_Name(
      static_cast<machine::MachineStatusEvent::MachineStage>(stage));
}

bool ReportedReady(MachineStage stage, bool ready) {
  return stage == MachineStage::kBooting || stage == MachineStage::kRunning ? ready : true;
}

SimCluster::SimCluster(ClusterSpec spec, const Timings& timings, double time_scale,
                       std::shared_ptr<Scheduler> scheduler, Journal* journal)
    : spec_(std::move(spec)),
      timings_(timings),
      time_scale_(time_scale),
      scheduler_(std::move(scheduler)),
      journal_(journal) {
  std::set<std::string> schematics = {std::string(kVanillaSchematic)};
  for (const auto& node_spec : spec_.nodes) {
    if (!node_spec.schematic.empty()) schematics.insert(node_spec.schematic);
  }
  registry_ = std::make_shared<RegistryCatalog>(std::vector<std::string>{}, schematics);
  uint64_t member_seed = std::hash<std::string>{}(spec_.name);
  for (const auto& node_spec : spec_.nodes) {
    auto node = std::make_unique<SimNode>();
    node->spec = node_spec;
    node->kube_labels.insert(node_spec.labels.begin(), node_spec.labels.end());
    node->tag = node_spec.talos_version;
    node->slots[0] = node_spec.talos_version;
    node->image = InitialInstallerImage(node_spec.platform, node_spec.schematic, node->tag);
    node->slot_images[0] = node->image;
    node->kubelet_version = node_spec.kubernetes_version;
    node->faults = node_spec.faults;
    if (node->is_control_plane()) {
      member_seed = member_seed * 6364136223846793005ULL + 1442695040888963407ULL;
      node->etcd_member_id = member_seed | 0x1000000000000000ULL;
    }
    const std::string k8s = "v" + node_spec.kubernetes_version;
    node->images = {{"kubelet", "ghcr.io/siderolabs/kubelet:" + k8s},
                    {"kube-proxy", "registry.k8s.io/kube-proxy:" + k8s}};
    if (node->is_control_plane()) {
      for (const char* c : {"kube-apiserver", "kube-controller-manager", "kube-scheduler"}) {
        node->images[c] = fmt::format("registry.k8s.io/{}:{}", c, k8s);
      }
    }
    nodes_.push_back(std::move(node));
  }
}

Scheduler::Duration SimCluster::Scaled(std::chrono::milliseconds d) const {
  return std::chrono::duration_cast<Scheduler::Duration>(
      std::chrono::duration<double, std::milli>(static_cast<double>(d.count()) * time_scale_));
}

void SimCluster::Boot(const std::vector<std::string>& addresses) {
  std::lock_guard lock(mu_);
  const WallTime now = scheduler_->WallNow();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    SimNode& node = *nodes_[i];
    node.address = addresses[i];
    node.kube_created = now - std::chrono::hours(24 * 30);
    node.machine_config = RenderMachineConfigLocked(node);
    BootUpLocked(node);
    BootedLocked(node);
    ReadyLocked(node);
    // Booted and ready at once: drop the steps the boot scheduled, or they would run again a
    // moment later and flip the node to RUNNING-not-ready and back (spurious MachineStatus
    // updates a watcher could take for the start of a reboot).
    ++node.epoch;
    // apid has been connected since before the simulation began.
    node.forwardable_from = {};
    node.forward_hangs_until = {};
    // The fleet file's power cuts count from the start.
    for (auto& f : node.faults) {
      if (f.kind != FaultKind::kPowerCycle) continue;
      if (f.count < 0) f.count = 1;
      SchedulePowerCycleLocked(node, f.delay);
    }
  }
  InitKubeLocked();
  ElectLeaderLocked();
  for (auto& node : nodes_) RefreshResourcesLocked(*node);
  NotifyLocked();
}

void SimCluster::Stop() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  for (auto& node : nodes_) ++node->epoch;
  NotifyLocked();
}

SimNode* SimCluster::FindNodeLocked(std::string_view name_or_address) {
  for (auto& node : nodes_) {
    if (node->address == name_or_address || node->spec.name == name_or_address) return node.get();
  }
  return nullptr;
}

NodeSnapshot SimCluster::SnapshotLocked(const SimNode& node) const {
  NodeSnapshot s;
  s.cluster = spec_.name;
  s.name = node.spec.name;
  s.address = node.address;
  s.role = node.spec.role;
  s.up = node.up;
  s.api_reachable = node.api_reachable();
  s.hanging_calls = node.hanging_calls;
  s.stage = node.stage;
  s.ready = node.ready;
  s.unmet_conditions = node.unmet;
  s.sequence = node.sequence;
  s.talos_tag = node.tag;
  s.kubernetes_version = node.kubelet_version;
  s.boot_id = node.boot_id;
  s.boots = node.boots;
  s.active_slot = node.active_slot == 0 ? 'A' : 'B';
  s.slot_a = node.slots[0];
  s.slot_b = node.slots[1];
  if (node.next_boot_slot) s.next_boot_slot = *node.next_boot_slot == 0 ? "A" : "B";
  if (node.fallback_slot) s.fallback_slot = *node.fallback_slot == 0 ? "A" : "B";
  s.kube_ready = node.kube_ready;
  s.unschedulable = node.unschedulable;
  if (node.is_control_plane()) {
    s.etcd_member_id = node.etcd_member_id;
    s.etcd_started = EtcdStartedLocked(node);
    s.etcd_healthy = EtcdHealthyLocked(node);
    s.etcd_leader = etcd_leader_ == node.etcd_member_id;
  }
  for (const auto& f : node.faults) {
    if (f.count != 0) s.faults.push_back(f);
  }
  return s;
}

void SimCluster::JournalCallLocked(const SimNode& node, std::string method, std::string role,
                                   std::string code, std::string endpoint, std::string detail) {
  if (journal_ == nullptr) return;
  journal_->Record({.seq = 0,
                    .time = {},
                    .kind = JournalEntry::Kind::kCall,
                    .cluster = spec_.name,
                    .node = node.spec.name,
                    .what = std::move(method),
                    .role = std::move(role),
                    .code = std::move(code),
                    .endpoint = std::move(endpoint),
                    .detail = std::move(detail)},
                   scheduler_->WallNow());
}

void SimCluster::JournalStateLocked(const SimNode& node, std::string what, std::string detail) {
  if (journal_ == nullptr) return;
  journal_->Record({.seq = 0,
                    .time = {},
                    .kind = JournalEntry::Kind::kState,
                    .cluster = spec_.name,
                    .node = node.spec.name,
                    .what = std::move(what),
                    .role = {},
                    .code = {},
                    .endpoint = {},
                    .detail = std::move(detail)},
                   scheduler_->WallNow());
}

absl::Status SimCluster::InjectFault(SimNode& node, Fault fault) {
  std::lock_guard lock(mu_);
  if (fault.kind == FaultKind::kPowerCycle && fault.count < 0) fault.count = 1;
  JournalStateLocked(node, "fault",
                     fmt::format("+{} count={}", FaultKindName(fault.kind), fault.count));
  node.faults.push_back(fault);
  if (fault.kind == FaultKind::kEtcdUnhealthy) ElectLeaderLocked();
  if (fault.kind == FaultKind::kPowerCycle) SchedulePowerCycleLocked(node, fault.delay);
  RefreshResourcesLocked(node);
  NotifyLocked();
  return absl::OkStatus();
}

void SimCluster::ClearFaults(SimNode& node, std::optional<FaultKind> kind) {
  std::lock_guard lock(mu_);
  std::erase_if(node.faults, [&](const Fault& f) { return !kind || f.kind == *kind; });
  JournalStateLocked(node, "fault",
                     kind ? fmt::format("-{}", FaultKindName(*kind)) : std::string("-all"));
  if (node.stuck_down && !node.HasFault(FaultKind::kNeverReturns)) {
    node.stuck_down = false;
    AfterLocked(node, Scaled(timings_.reboot), [this](SimNode& n) { BootUpLocked(n); });
  }
  ElectLeaderLocked();
  RefreshResourcesLocked(node);
  NotifyLocked();
}

void SimCluster::AfterLocked(SimNode& node, Scheduler::Duration delay,
                             std::function<void(SimNode&)> step) {
  const uint64_t epoch = node.epoch;
  SimNode* target = &node;
  scheduler_->After(delay, [this, target, epoch, step = std::move(step)] {
    std::lock_guard lock(mu_);
    if (stopping_ || target->epoch != epoch) return;
    step(*target);
    NotifyLocked();
  });
}

void SimCluster::PublishLocked(SimNode& node, const std::string& type_name,
                               const std::string& value, const std::string& actor_id) {
  const WallTime now = scheduler_->WallNow();
  node.events.push_back({.seq = node.next_event_seq++,
                         .id = NewXid(now),
                         .actor_id = actor_id,
                         .time = now,
                         .type_url = "talos/runtime/machine." + type_name,
                         .value = value});
  while (node.events.size() > 2000) node.events.pop_front();
  NotifyLocked();
}

void SimCluster::SetStageLocked(SimNode& node, MachineStage stage, bool ready,
                                std::vector<std::string> unmet) {
  if (node.stage == stage && node.ready == ready && node.unmet == unmet) return;
  node.stage = stage;
  node.ready = ready;
  node.unmet = std::move(unmet);
  machine::MachineStatusEvent ev;
  ev.set_stage(static_cast<machine::MachineStatusEvent::MachineStage>(stage));
  ev.mutable_status()->set_ready(ReportedReady(stage, ready));
  for (const auto& name : node.unmet) {
    auto* c = ev.mutable_status()->add_unmet_conditions();
    c->set_name(name);
    c->set_reason(name == "nodeReady" ? "node is not ready" : "waiting for " + name);
  }
  PublishLocked(node, "MachineStatusEvent", ev.SerializeAsString(), "");
  JournalStateLocked(node, "stage",
                     fmt::format("{} ready={}", MachineStageName(stage), ready ? "true" : "false"));
  RefreshResourcesLocked(node);
}

void SimCluster::SequenceEventLocked(SimNode& node, const std::string& sequence, int action,
                                     const std::string& actor, int error_code,
                                     const std::string& error) {
  machine::SequenceEvent ev;
  ev.set_sequence(sequence);
  ev.set_action(static_cast<machine::SequenceEvent::Action>(action));
  if (error_code >= 0) {
    ev.mutable_error()->set_code(static_cast<common::Code>(error_code));
    ev.mutable_error()->set_message(error);
  }
  PublishLocked(node, "SequenceEvent", ev.SerializeAsString(), actor);
}

void SimCluster::SetServiceLocked(SimNode& node, const std::string& id, const std::string& state,
                                  bool healthy) {
  ServiceRecord& rec = node.services[id];
  if (rec.state == state && rec.healthy == healthy && rec.since != WallTime{}) return;
  rec.state = state;
  rec.healthy = healthy;
  rec.unknown = state != "Running";
  rec.message = healthy ? "Health check successful" : "";
  rec.since = scheduler_->WallNow();
  static const std::map<std::string, machine::ServiceStateEvent::Action> kActions = {
      {"Running", machine::ServiceStateEvent::RUNNING},
      {"Starting", machine::ServiceStateEvent::STARTING},
      {"Waiting", machine::ServiceStateEvent::WAITING},
      {"Stopping", machine::ServiceStateEvent::STOPPING},
      {"Finished", machine::ServiceStateEvent::FINISHED},
      {"Failed", machine::ServiceStateEvent::FAILED}};
  machine::ServiceStateEvent ev;
  ev.set_service(id);
  auto it = kActions.find(state);
  ev.set_action(it == kActions.end() ? machine::ServiceStateEvent::INITIALIZED : it->second);
  ev.set_message(fmt::format("Service {}", state));
  ev.mutable_health()->set_healthy(healthy);
  ev.mutable_health()->set_unknown(rec.unknown);
  PublishLocked(node, "ServiceStateEvent", ev.SerializeAsString(), "");
}

}  // namespace tr::sim
