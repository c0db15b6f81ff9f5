// A tiny model of a cluster's nodes for rollout tests: it reacts to the rollout's actions the
// way Talos nodes do (legacy upgrade drains and reboots by itself; lifecycle install writes
// the other slot and waits for a reboot), on a simulated clock.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/rollout.h"
#include "core/rollout_record.h"
#include "tests/support/fleet_fixtures.h"

namespace tr::core::testing_fixtures {

class RolloutWorld {
 public:
  RolloutWorld(ClusterProfile profile, ObservedCluster observed)
      : profile_(std::move(profile)), observed_(std::move(observed)) {}

  ClusterProfile& profile() { return profile_; }
  ObservedCluster& observed() { return observed_; }
  TimePoint now() const { return now_; }
  const std::map<std::string, int>& reboots_into_upgrade() const { return upgrades_; }
  std::vector<std::string>& log() { return log_; }
  // The images pre-pulled on each node, in order (repeats included).
  const std::map<std::string, std::vector<std::string>>& pulled() const { return pulled_; }
  // When set, the node's next boot after an upgrade falls back to its old version.
  std::map<std::string, bool> fail_boot;
  // When set, the node never comes back after going down.
  std::map<std::string, bool> never_return;
  // When set, the node boots the new version and stays RUNNING, never Ready (Talos keeps it
  // there: not Ready is no reason to revert).
  std::map<std::string, bool> never_ready;
  std::chrono::seconds reboot_time{120};

  // Applies an action's effect on the nodes (not on memory).
  void Apply(const RolloutDecision& d) {
    NodeObservation* n = d.node.empty() ? nullptr : Find(d.node);
    switch (d.kind) {
      case ActionKind::kPrePullImage:
        for (const std::string& node : d.nodes) pulled_[node].push_back(d.image);
        break;
      case ActionKind::kCallUpgrade:
        log_.push_back("upgrade " + d.node);
        n->stage = MachineStage::kUpgrading;
        n->ready = false;
        n->schedulable = false;
        StartReboot(d.node, Target(d), /*uncordon=*/true);
        break;
      case ActionKind::kInstallImage:
        staged_[d.node] = Target(d);
        break;
      case ActionKind::kInstallAhead:
        log_.push_back("install " + d.node);
        ++installs_[d.node];
        staged_[d.node] = Target(d);
        break;
      case ActionKind::kUnstageNode:
        log_.push_back("unstage " + d.node);
        if (!d.image.empty()) staged_[d.node] = Target(d);
        break;
      case ActionKind::kDrainNode:
        n->schedulable = false;
        break;
      case ActionKind::kRebootNode:
        log_.push_back("reboot " + d.node);
        n->stage = MachineStage::kRebooting;
        n->ready = false;
        StartReboot(d.node, staged_[d.node], /*uncordon=*/false);
        break;
      case ActionKind::kCompleteNode:
        n->schedulable = true;
        break;
      default:
        break;
    }
  }

  // A reboot nobody asked for (a power cut, a panic): the node boots what its slot holds.
  void PowerCycle(const std::string& node) {
    log_.push_back("power-cycle " + node);
    NodeObservation* n = Find(node);
    n->ready = false;
    n->stage = MachineStage::kBooting;
    auto it = staged_.find(node);
    StartReboot(node, it != staged_.end() ? it->second : Image{*n->talos, n->schematic},
                /*uncordon=*/false);
  }
  // Installs ahead per node (InstallAhead calls), repeats included.
  const std::map<std::string, int>& installs() const { return installs_; }

  void AdvanceTo(TimePoint t) {
    if (t < now_) return;
    now_ = t;
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->at > now_) {
        ++it;
        continue;
      }
      Finish(*it);
      it = pending_.erase(it);
    }
  }

 private:
  // What an installer image puts on a node: its tag's version and, for a factory installer
  // (`<host>/<platform>-installer/<64-hex id>:<tag>`), its schematic.
  struct Image {
    Version version;
    std::optional<std::string> schematic;
  };

  struct PendingBoot {
    std::string node;
    Image image;
    bool uncordon;
    TimePoint at;
  };

  static Image Target(const RolloutDecision& d) {
    const size_t colon = d.image.rfind(':');
    const std::string repository = d.image.substr(0, colon);
    const std::string id = repository.substr(repository.rfind('/') + 1);
    Image image{*ParseTalosVersion(d.image.substr(colon + 1)), std::nullopt};
    if (id.size() == 64 && repository.find("-installer/") != std::string::npos) image.schematic = id;
    return image;
  }

  NodeObservation* Find(const std::string& name) {
    for (NodeObservation& n : observed_.nodes) {
      if (n.name == name) return &n;
    }
    return nullptr;
  }

  void StartReboot(const std::string& node, const Image& image, bool uncordon) {
    ++upgrades_[node];
    NodeObservation* n = Find(node);
    n->etcd_healthy = false;
    if (never_return[node]) {
      n->reachable = false;
      return;
    }
    pending_.push_back({node, image, uncordon, now_ + reboot_time});
  }

  void Finish(const PendingBoot& boot) {
    NodeObservation* n = Find(boot.node);
    n->boot_id = n->boot_id + "+";
    staged_.erase(boot.node);  // booted (or, on a failed boot, fallen back from)
    if (!fail_boot[boot.node]) {
      n->talos = boot.image.version;
      n->schematic = boot.image.schematic;
    }
    n->stage = MachineStage::kRunning;
    n->ready = !never_ready[boot.node];
    n->etcd_healthy = true;
    if (boot.uncordon) n->schedulable = true;
  }

  ClusterProfile profile_;
  ObservedCluster observed_;
  TimePoint now_ = TimePoint{} + std::chrono::hours(1000);
  std::vector<PendingBoot> pending_;
  std::map<std::string, Image> staged_;
  std::map<std::string, int> upgrades_;
  std::map<std::string, int> installs_;
  std::vector<std::string> log_;
  std::map<std::string, std::vector<std::string>> pulled_;
};

// Applies a decision to the memory as the daemon records it.
inline void Record(const RolloutDecision& d, RolloutMemory& mem, const Policy& policy,
                   TimePoint now) {
  mem = RecordAction(d, std::move(mem), policy, now);
}

}  // namespace tr::core::testing_fixtures
