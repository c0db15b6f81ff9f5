// etcd as the control-plane nodes of a simulated cluster see it: membership (every control
// plane), started/healthy per node state and faults, a leader that exists only with quorum,
// moves when the leader goes down (an election, journaled "etcd-leader-lost") or is handed over
// by EtcdForfeitLeadership, and the pre-upgrade checks with Talos' wording (facts §6.1).
#include <algorithm>

#include "core/version.h"
#include "fmt/format.h"
#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {

std::vector<const SimNode*> SimCluster::EtcdMembersLocked() const {
  std::vector<const SimNode*> members;
  for (const auto& node : nodes_) {
    if (node->is_control_plane()) members.push_back(node.get());
  }
  return members;
}

bool SimCluster::EtcdStartedLocked(const SimNode& node) const {
  if (!node.is_control_plane() || !node.up) return false;
  auto it = node.services.find("etcd");
  return it != node.services.end() && it->second.state == "Running";
}

bool SimCluster::EtcdHealthyLocked(const SimNode& node) const {
  return EtcdStartedLocked(node) && !node.HasFault(FaultKind::kEtcdUnhealthy);
}

void SimCluster::ElectLeaderLocked() {
  const auto members = EtcdMembersLocked();
  std::vector<const SimNode*> healthy;
  for (const SimNode* m : members) {
    if (EtcdHealthyLocked(*m)) healthy.push_back(m);
  }
  const size_t quorum = members.size() / 2 + 1;
  uint64_t leader = 0;
  if (healthy.size() >= quorum) {
    leader = healthy.front()->etcd_member_id;
    for (const SimNode* m : healthy) {
      if (m->etcd_member_id == etcd_leader_) leader = etcd_leader_;
    }
  }
  if (leader == etcd_leader_) return;
  for (const SimNode* m : members) {
    // Leadership lost by going away (reboot, crash, fault), not handed over: an election.
    if (etcd_leader_ != 0 && m->etcd_member_id == etcd_leader_) {
      JournalStateLocked(*m, "etcd-leader-lost", fmt::format("{:016x} term {}", etcd_leader_,
                                                             raft_term_));
    }
  }
  etcd_leader_ = leader;
  if (leader != 0) ++raft_term_;
  raft_index_ += 7;
  for (const SimNode* m : members) {
    if (m->etcd_member_id == leader) {
      JournalStateLocked(*m, "etcd-leader", fmt::format("{:016x} term {}", leader, raft_term_));
      return;
    }
  }
  JournalStateLocked(*members.front(), "etcd-leader", "none (no quorum)");
}

absl::StatusOr<std::string> SimCluster::ForfeitEtcdLeadershipLocked(const SimNode& node) {
  // v1.13.9 v1alpha1_server.go EtcdForfeitLeadership -> internal/pkg/etcd/etcd.go
  // ForfeitLeadership: list the members (needs a leader), refuse a cluster of one, return ""
  // when the node does not lead, else MoveLeader to the first other member of the list (etcd
  // lists members by ID) and return its name. Errors are wrapped "failed to forfeit leadership: ".
  const std::string prefix = "failed to forfeit leadership: ";
  if (etcd_leader_ == 0) {
    return absl::UnavailableError(prefix + "failed to list etcd members: etcdserver: no leader");
  }
  std::vector<const SimNode*> members = EtcdMembersLocked();
  if (members.size() == 1) {
    return absl::UnknownError(prefix + "cannot forfeit leadership, only one member");
  }
  if (!EtcdStartedLocked(node)) return absl::UnknownError(prefix + "context deadline exceeded");
  if (etcd_leader_ != node.etcd_member_id) return std::string();
  std::sort(members.begin(), members.end(), [](const SimNode* a, const SimNode* b) {
    return a->etcd_member_id < b->etcd_member_id;
  });
  const SimNode* to = nullptr;
  for (const SimNode* m : members) {
    if (m != &node) {
      to = m;
      break;
    }
  }
  // etcd's MoveLeader waits for the transferee to catch up and take over; one that is down
  // or unhealthy never does (etcd server/etcdserver/errors.go ErrTimeoutLeaderTransfer).
  if (!EtcdHealthyLocked(*to)) {
    return absl::UnknownError(prefix +
                              "etcdserver: request timed out, leader transfer took too long");
  }
  etcd_leader_ = to->etcd_member_id;
  ++raft_term_;
  raft_index_ += 3;
  JournalStateLocked(*to, "etcd-leader",
                     fmt::format("{:016x} term {} (handed over by {})", etcd_leader_, raft_term_,
                                 node.spec.name));
  return to->spec.name;
}

bool PreserveSkipsEtcdChecks(const core::Version& version) {
  // v1alpha1_server.go Upgrade: `!force && !preserve` guards the checks only in v1.12.9+,
  // v1.13.4+ and v1.14 (from v1.14.0-alpha.2); before, only `force` skips them.
  if (version.major != 1) return version.major > 1;
  if (version.minor == 12) return version.patch >= 9;
  if (version.minor == 13) return version.patch >= 4;
  return version.minor >= 14;
}

absl::Status SimCluster::ValidateEtcdForUpgradeLocked(SimNode& node, const LegacyUpgradeParams& p) {
  auto version = core::ParseTalosVersion(node.tag);
  const int minor = version.ok() ? version->minor : 0;
  if (p.force || (p.preserve && version.ok() && PreserveSkipsEtcdChecks(*version))) {
    return absl::OkStatus();
  }
  for (auto& f : node.faults) {
    if (f.kind == FaultKind::kUpgradeLockHeld && f.count != 0) {
      if (f.count > 0) --f.count;
      return absl::UnknownError(
          "failed to acquire upgrade mutex: error trying to lock etcd upgrade mutex: mutex: "
          "Locked by another session");
    }
  }
  const std::string prefix = "error validating etcd for upgrade: ";
  const auto members = EtcdMembersLocked();
  if (minor <= 7 && !p.preserve && members.size() == 1) {
    return absl::UnknownError(
        prefix +
        "only 1 etcd member found; assuming this is not an HA setup and refusing to upgrade; if "
        "this is a single-node cluster, use --preserve to upgrade");
  }
  if (members.size() == 2) {
    return absl::UnknownError(fmt::format(
        "{}etcd member count({}) is insufficient to maintain quorum if upgrade commences", prefix,
        members.size()));
  }
  for (const SimNode* m : members) {
    if (!EtcdStartedLocked(*m)) {
      return absl::UnknownError(fmt::format(
          "{}etcd member {:016x} is not started, all members must be running to perform an "
          "upgrade",
          prefix, m->etcd_member_id));
    }
    if (!EtcdHealthyLocked(*m)) {
      return absl::UnknownError(fmt::format(
          "{}etcd member {:016x} is not healthy; all members must be healthy to perform an "
          "upgrade: context deadline exceeded",
          prefix, m->etcd_member_id));
    }
  }
  return absl::OkStatus();
}

}  // namespace tr::sim
