// The machine sequences of a simulated node: legacy upgrade, reboot, rollback, boot, and the
// 1.13+ install and image pull. Phase and task names follow docs/talos-api.md §6.2.
#include "core/version.h"
#include "fmt/format.h"
#include "machine/machine.pb.h"
#include "tests/sim/common/ids.h"
#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {
namespace {

constexpr int64_t kRebootCmdRestart = 0x01234567;
constexpr int64_t kRebootCmdKexec = 0x45584543;

int Minor(const std::string& tag) {
  auto v = core::ParseTalosVersion(tag);
  return v.ok() ? v->minor : 0;
}

// The task names upstream reports for a phase: each task function returns its own name
// (v1alpha1_sequencer_tasks.go). Before 1.10 two phases ran two tasks side by side.
std::vector<std::string> SeqTaskNames(int minor, const std::string& phase, bool remove_pods) {
  static const std::map<std::string, std::string> single = {
      {"denyNewServices", "denyNewServices"},
      {"drain", "cordonAndDrainNode"},
      {"dbus", "stopDBus"},
      {"leave", "leaveEtcd"},
      {"stopServices", "stopServicesForUpgrade"},
      {"unmountUser", "unmountUserDisks"},
      {"unmountBind", "unmountSystemDiskBindMounts"},
      {"unmountPromotable", "unmountPromotableSystemPartitions"},
      {"verifyDisk", "verifyDiskAvailability"},
      {"volumeFinalize", "teardownLifecycle"},
      {"upgrade", "upgrade"},
      {"meta", "reloadMeta"},
      {"kexec", "kexecPrepare"},
      {"stopEverything", "stopAllServices"},
      {"reboot", "reboot"}};
  if (phase == "cleanup") return {remove_pods ? "removeAllPods" : "stopAllPods"};
  if (phase == "unmount" || phase == "umount") {
    if (minor <= 9) return {"unmountOverlayFilesystems", "unmountPodMounts"};
    return {"unmountPodMounts"};
  }
  if (phase == "unmountSystem") {
    if (minor <= 9) return {"unmountEphemeralPartition", "unmountStatePartition"};
    return {"unmountEphemeralPartition"};
  }
  return {single.at(phase)};
}

// The phases upstream's stopAllPhaselist appends on a metal node: stop services, unmount, tear
// the volumes down, stop everything, and prepare kexec when `kexec` (1.14 does that last).
std::vector<std::string> SeqMetalStopPhases(int minor, bool kexec) {
  std::vector<std::string> names;
  if (minor >= 14) names.push_back("denyNewServices");
  names.push_back("stopServices");
  if (minor <= 9) names.push_back("unmountUser");
  for (const char* n : {"umount", "unmountBind"}) names.push_back(n);
  if (minor >= 14) names.push_back("unmountPromotable");
  names.push_back("unmountSystem");
  if (minor >= 8) names.push_back("volumeFinalize");
  if (kexec && minor <= 13) names.push_back("kexec");
  names.push_back("stopEverything");
  if (kexec && minor >= 14) names.push_back("kexec");
  return names;
}

// The phase names of sequence `reboot`. FORCE skips straight to the reboot phase since 1.12
// (1.11 and older ignore the mode); a container-mode node only stops everything.
std::vector<std::string> SeqRebootPhaseNames(int minor, bool container, SimRebootMode mode) {
  if (mode == SimRebootMode::kForce && minor >= 12) return {"reboot"};
  std::vector<std::string> names = {"cleanup", "dbus"};
  if (container) {
    names.push_back("stopEverything");
  } else {
    for (auto& n : SeqMetalStopPhases(minor, true)) names.push_back(std::move(n));
  }
  names.push_back("reboot");
  return names;
}

// The phase names of sequence `upgrade` on a node of that minor (facts §6.2).
std::vector<std::string> UpgradePhaseNames(int minor, bool control_plane, bool preserve,
                                           bool kexec) {
  std::vector<std::string> names;
  if (minor >= 14) names.push_back("denyNewServices");
  for (const char* n : {"drain", "cleanup", "dbus"}) names.push_back(n);
  if (minor <= 7 && control_plane && !preserve) names.push_back("leave");
  names.push_back("stopServices");
  if (minor <= 9) names.push_back("unmountUser");
  for (const char* n : {"unmount", "unmountBind"}) names.push_back(n);
  if (minor >= 14) names.push_back("unmountPromotable");
  names.push_back("unmountSystem");
  names.push_back(minor <= 7 ? "verifyDisk" : "volumeFinalize");
  for (const char* n : {"upgrade", "meta"}) names.push_back(n);
  if (kexec) names.push_back("kexec");
  for (const char* n : {"stopEverything", "reboot"}) names.push_back(n);
  return names;
}

// The phase names of sequence `stageUpgrade`: the reboot's stop list, kexec unless power cycled.
std::vector<std::string> SeqStagePhaseNames(int minor, bool control_plane, bool preserve,
                                            bool kexec) {
  std::vector<std::string> names = {"cleanup", "dbus"};
  if (minor <= 7 && control_plane && !preserve) names.push_back("leave");
  for (auto& n : SeqMetalStopPhases(minor, kexec)) names.push_back(std::move(n));
  names.push_back("reboot");
  return names;
}

// One phase of `minor` with upstream's task names; a kexec phase loads the next kernel unless
// the request asked for a power cycle (the phase still runs, its task skips the load).
SimCluster::Phase SeqPhase(int minor, const std::string& name, bool remove_pods, bool load_kexec) {
  SimCluster::Phase phase{
      .name = name, .tasks = SeqTaskNames(minor, name, remove_pods), .delay = {}, .action = {}};
  if (name == "kexec" && load_kexec) {
    phase.action = [](SimNode& n) { n.kexec_prepared = true; };
  }
  return phase;
}

}  // namespace

bool SimCluster::SequenceLockedLocked(SimNode& node, const std::string& sequence,
                                      const std::string& actor) {
  if (node.sequence.empty()) return false;
  if (node.sequence == "boot" || node.sequence == "initialize") {
    ++node.epoch;  // a new sequence takes over a running boot
    node.sequence.clear();
    return false;
  }
  SequenceEventLocked(node, sequence, machine::SequenceEvent::NOOP, actor, common::LOCKED,
                      "sequence not started: locked");
  JournalStateLocked(node, "sequence-locked", fmt::format("{} while {}", sequence, node.sequence));
  return true;
}

std::shared_ptr<Mailbox<absl::StatusOr<std::string>>> SimCluster::LegacyUpgrade(
    SimNode& node, LegacyUpgradeParams p) {
  auto box = std::make_shared<Mailbox<absl::StatusOr<std::string>>>();
  std::lock_guard lock(mu_);
  const uint64_t generation = node.generation;
  SimNode* n = &node;
  // The installer is pulled into the system containerd (install/pull.go), skipped when it is
  // already there; the legacy ImagePull pre-pull lands in the CRI containerd and does not count.
  const bool present = HasImageLocked(node, ImageStore::kSystemInMemory, p.image);
  scheduler_->After(
      present ? Scheduler::Duration{} : Scaled(timings_.image_pull), [this, n, generation, box, p] {
        std::lock_guard inner(mu_);
        if (stopping_ || n->generation != generation || !n->up) {
          box->Push(absl::UnavailableError("connection closed: node is rebooting"));
          return;
        }
        auto tag = ValidateInstallerLocked(*n, p.image);
        if (!tag.ok()) {
          box->Push(absl::UnknownError(fmt::format("error validating installer image \"{}\": {}",
                                                   p.image, std::string(tag.status().message()))));
          return;
        }
        if (n->is_control_plane()) {
          if (auto st = ValidateEtcdForUpgradeLocked(*n, p); !st.ok()) {
            box->Push(st);
            return;
          }
        }
        const std::string actor = NewUuid();
        box->Push(actor);
        StartLegacyUpgradeLocked(*n, p, *tag, actor);
      });
  return box;
}

void SimCluster::StartLegacyUpgradeLocked(SimNode& node, const LegacyUpgradeParams& p,
                                          const std::string& tag, const std::string& actor) {
  const std::string sequence = p.stage ? "stageUpgrade" : "upgrade";
  if (SequenceLockedLocked(node, sequence, actor)) return;
  node.sequence = sequence;
  JournalStateLocked(node, "sequence", fmt::format("{} to {} actor={}", sequence, tag, actor));
  SequenceEventLocked(node, sequence, machine::SequenceEvent::START, actor);
  SetStageLocked(node, MachineStage::kUpgrading, false, {});
  RunPhasesLocked(node, LegacyUpgradePhasesLocked(node, p, tag), 0, actor);
  NotifyLocked();
}

std::vector<SimCluster::Phase> SimCluster::LegacyUpgradePhasesLocked(SimNode& node,
                                                                     const LegacyUpgradeParams& p,
                                                                     const std::string& tag) {
  auto install = [this, installed = tag, image = p.image](SimNode& m) {
    InstallIntoSlotLocked(m, installed, image);
  };
  // A staged upgrade runs the installer early in the next boot; the simulator writes the slot
  // before that reboot, so the node still comes back once, on the new version.
  if (p.stage) install(node);
  const int minor = Minor(node.tag);
  const bool remove_pods = minor <= 7 && !p.preserve && !p.stage;
  std::vector<Phase> phases;
  for (const auto& name : (p.stage ? SeqStagePhaseNames : UpgradePhaseNames)(
           minor, node.is_control_plane(), p.preserve, !p.powercycle)) {
    Phase phase = SeqPhase(minor, name, remove_pods, true);
    if (name == "drain") {
      phase.delay = Scaled(timings_.drain);
      phase.action = [this](SimNode& m) { DrainLocked(m); };
      CordonLocked(node, true, "talos");
      node.talos_cordoned = true;
    } else if (name == "upgrade") {
      phase.delay = Scaled(timings_.install);
      phase.action = install;
    }
    phases.push_back(std::move(phase));
  }
  return phases;
}

void SimCluster::RunPhasesLocked(SimNode& node, std::vector<Phase> phases, size_t index,
                                 std::string actor) {
  if (index >= phases.size()) return;
  Phase& phase = phases[index];
  machine::PhaseEvent pe;
  pe.set_phase(phase.name);
  pe.set_action(machine::PhaseEvent::START);
  PublishLocked(node, "PhaseEvent", pe.SerializeAsString(), actor);
  if (phase.name == "kexec" || phase.name == "reboot") {
    SetStageLocked(node, MachineStage::kRebooting, false, {});
  }
  for (const auto& task : phase.tasks) {
    machine::TaskEvent te;
    te.set_task(task);
    te.set_action(machine::TaskEvent::START);
    PublishLocked(node, "TaskEvent", te.SerializeAsString(), actor);
  }
  if (phase.name == "reboot") {
    machine::RestartEvent re;
    const bool kexec = node.kexec_prepared;
    re.set_cmd(kexec ? kRebootCmdKexec : kRebootCmdRestart);
    PublishLocked(node, "RestartEvent", re.SerializeAsString(), actor);
    GoDownLocked(node, kexec);
    return;
  }
  const Scheduler::Duration delay = phase.delay;
  AfterLocked(node, delay, [this, phases = std::move(phases), index, actor](SimNode& n) mutable {
    Phase& done = phases[index];
    if (done.action) done.action(n);
    for (const auto& task : done.tasks) {
      machine::TaskEvent stop_task;
      stop_task.set_task(task);
      stop_task.set_action(machine::TaskEvent::STOP);
      PublishLocked(n, "TaskEvent", stop_task.SerializeAsString(), actor);
    }
    machine::PhaseEvent stop_phase;
    stop_phase.set_phase(done.name);
    stop_phase.set_action(machine::PhaseEvent::STOP);
    PublishLocked(n, "PhaseEvent", stop_phase.SerializeAsString(), actor);
    RunPhasesLocked(n, std::move(phases), index + 1, std::move(actor));
  });
}

absl::StatusOr<std::string> SimCluster::Reboot(SimNode& node, SimRebootMode mode) {
  std::lock_guard lock(mu_);
  const std::string actor = NewUuid();
  if (SequenceLockedLocked(node, "reboot", actor)) return actor;
  StartRebootSequenceLocked(node, actor, mode);
  return actor;
}

// The reboot sequence: its SequenceEvent sets MachineStatus to rebooting at once, but the node
// stays up (pods, then services stopping) until its reboot phase.
void SimCluster::StartRebootSequenceLocked(SimNode& node, const std::string& actor,
                                           SimRebootMode mode) {
  node.sequence = "reboot";
  JournalStateLocked(node, "sequence", fmt::format("reboot actor={}", actor));
  SequenceEventLocked(node, "reboot", machine::SequenceEvent::START, actor);
  SetStageLocked(node, MachineStage::kRebooting, false, {});
  const int minor = Minor(node.tag);
  const bool container = node.spec.platform == "container";
  std::vector<Phase> phases;
  for (const auto& name : SeqRebootPhaseNames(minor, container, mode)) {
    Phase phase = SeqPhase(minor, name, false, mode != SimRebootMode::kPowercycle);
    if (name == "cleanup" || name == "stopServices") phase.delay = Scaled(timings_.stop);
    phases.push_back(std::move(phase));
  }
  RunPhasesLocked(node, std::move(phases), 0, actor);
  NotifyLocked();
}

absl::Status SimCluster::Rollback(SimNode& node) {
  std::lock_guard lock(mu_);
  // The bootloader flips its default entry (grub revert.go flip, sd-boot revert): over a pending
  // install that is the running slot, so a rollback then un-stages.
  const int other = 1 - node.default_slot();
  if (node.slots[other].empty()) {
    return absl::UnknownError(
        fmt::format("failed to revert bootloader: cannot rollback to \"{}\", label does not exist",
                    other == 0 ? "A" : "B"));
  }
  node.next_boot_slot = other;
  JournalStateLocked(
      node, "slot",
      fmt::format("rollback armed to slot {} ({})", other == 0 ? 'A' : 'B', node.slots[other]));
  const std::string actor = NewUuid();
  // Upstream runs the reboot sequence with the RollbackRequest: no mode, so the full list.
  if (!SequenceLockedLocked(node, "reboot", actor)) {
    StartRebootSequenceLocked(node, actor, SimRebootMode::kDefault);
  }
  return absl::OkStatus();
}

void SimCluster::InstallIntoSlotLocked(SimNode& node, const std::string& tag,
                                       const std::string& image) {
  // grub's Upgrade flips its default entry and keeps the old default as the fallback; sd-boot
  // keeps only LoaderEntryDefault's UKI and makes it the fallback (docs/talos-api.md §6.5). Over
  // a pending install (not booted yet) that overwrites the running slot and makes the pending
  // one the fallback.
  const int previous = node.default_slot();
  const int target = 1 - previous;
  node.slots[target] = tag;
  node.slot_images[target] = image;
  node.next_boot_slot = target;
  node.fallback_slot = previous;
  JournalStateLocked(node, "slot",
                     fmt::format("{} installed in slot {}", tag, target == 0 ? 'A' : 'B'));
}

void SimCluster::SchedulePowerCycleLocked(SimNode& node, std::chrono::milliseconds delay) {
  SimNode* n = &node;
  scheduler_->After(Scaled(delay), [this, n, delay] {
    std::lock_guard lock(mu_);
    if (stopping_ || !FireFaultLocked(*n, FaultKind::kPowerCycle, "")) return;
    if (n->up) {
      GoDownLocked(*n, false);
    } else {
      JournalStateLocked(*n, "fault", "power_cycle: the machine is down already");
    }
    if (n->HasFault(FaultKind::kPowerCycle)) SchedulePowerCycleLocked(*n, delay);
    NotifyLocked();
  });
}

void SimCluster::GoDownLocked(SimNode& node, bool kexec) {
  node.up = false;
  node.kexec_prepared = false;
  node.last_life_events = node.events;
  node.last_life_cosi_log = node.cosi_log;
  node.last_life_generation = node.generation;
  ++node.generation;
  ++node.epoch;
  node.services.clear();
  node.kube_ready = false;
  node.sequence.clear();
  for (auto& pod : pods_) {
    if (pod.node == node.spec.name) pod.ready = false;
  }
  JournalStateLocked(node, "down", kexec ? "kexec" : "reboot");
  ElectLeaderLocked();
  Scheduler::Duration down = Scaled(timings_.reboot);
  for (const auto& f : node.faults) {
    if (f.kind == FaultKind::kSlowReboot && f.count != 0) down += Scaled(f.delay);
  }
  for (auto& f : node.faults) {
    if (f.kind == FaultKind::kNeverReturns && f.count != 0) {
      if (f.count > 0) --f.count;
      node.stuck_down = true;
      JournalStateLocked(node, "fault", "never_returns fired");
      NotifyLocked();
      return;
    }
  }
  AfterLocked(node, down, [this](SimNode& n) { BootUpLocked(n); });
  NotifyLocked();
}

}  // namespace tr::sim
