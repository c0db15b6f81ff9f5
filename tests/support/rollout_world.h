// A tiny model of a cluster's nodes for rollout tests: it reacts to the rollout's actions the
// way Talos nodes do (legacy upgrade drains and reboots by itself; lifecycle install writes
// the other slot and waits for a reboot), on a simulated clock.
#pragma once

#include <map>
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
  // When set, the node's next boot after an upgrade falls back to its old version.
  std::map<std::string, bool> fail_boot;
  // When set, the node never comes back after going down.
  std::map<std::string, bool> never_return;
  std::chrono::seconds reboot_time{120};

  // Applies an action's effect on the nodes (not on memory).
  void Apply(const RolloutDecision& d) {
    NodeObservation* n = d.node.empty() ? nullptr : Find(d.node);
    switch (d.kind) {
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
  struct PendingBoot {
    std::string node;
    Version version;
    bool uncordon;
    TimePoint at;
  };

  Version Target(const RolloutDecision& d) const {
    const std::string tag = d.image.substr(d.image.rfind(':') + 1);
    return *ParseTalosVersion(tag);
  }

  NodeObservation* Find(const std::string& name) {
    for (NodeObservation& n : observed_.nodes) {
      if (n.name == name) return &n;
    }
    return nullptr;
  }

  void StartReboot(const std::string& node, const Version& version, bool uncordon) {
    ++upgrades_[node];
    NodeObservation* n = Find(node);
    n->etcd_healthy = false;
    if (never_return[node]) {
      n->reachable = false;
      return;
    }
    pending_.push_back({node, version, uncordon, now_ + reboot_time});
  }

  void Finish(const PendingBoot& boot) {
    NodeObservation* n = Find(boot.node);
    n->boot_id = n->boot_id + "+";
    if (!fail_boot[boot.node]) n->talos = boot.version;
    n->stage = MachineStage::kRunning;
    n->ready = true;
    n->etcd_healthy = true;
    if (boot.uncordon) n->schedulable = true;
  }

  ClusterProfile profile_;
  ObservedCluster observed_;
  TimePoint now_ = TimePoint{} + std::chrono::hours(1000);
  std::vector<PendingBoot> pending_;
  std::map<std::string, Version> staged_;
  std::map<std::string, int> upgrades_;
  std::vector<std::string> log_;
};

// Applies a decision to the memory as the daemon records it.
inline void Record(const RolloutDecision& d, RolloutMemory& mem, const Policy& policy,
                   TimePoint now) {
  mem = RecordAction(d, std::move(mem), policy, now);
}

}  // namespace tr::core::testing_fixtures
