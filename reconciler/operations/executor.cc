#include "reconciler/operations/executor.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/cord.h"
#include "base/thread_name.h"
#include "core/pending_mark.h"
#include "core/planner.h"
#include "core/timestamp.h"
#include "fmt/format.h"
#include "reconciler/clients/talos/talos_answers.h"
#include "reconciler/operations/etcd_snapshots.h"
#include "reconciler/runtime/private_files.h"

namespace tr::reconciler {
namespace {

const core::NodeSpec* FindNode(const core::ClusterProfile& profile, const std::string& name) {
  for (const core::NodeSpec& node : profile.nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

// The Kubernetes node of a profile node: a node of that name, else one with its address.
absl::StatusOr<kube::KubeNode> KubeNodeOf(kube::KubeClient& kube, const core::NodeSpec& node) {
  absl::StatusOr<std::vector<kube::KubeNode>> nodes = kube.ListNodes();
  if (!nodes.ok()) return nodes.status();
  if (const kube::KubeNode* k = kube::FindKubeNode(*nodes, node.name, node.address)) return *k;
  return absl::NotFoundError(
      fmt::format("no Kubernetes node for {} ({})", node.name, node.address));
}

// The lifecycle path cordoned the node; Talos uncordons it by itself after a legacy upgrade,
// and then there is nothing to do: no call, and no "uncordoned" said. The look that decided
// the completion tells which, unless it saw the node cordoned: then the node is asked again.
absl::StatusOr<ActionResult> Uncordon(kube::KubeClient* kube, const core::NodeSpec& node,
                                      bool seen_cordoned) {
  if (kube == nullptr) return ActionResult{};
  if (!seen_cordoned) return ActionResult{"", node.name + " schedulable already"};
  absl::StatusOr<kube::KubeNode> k = KubeNodeOf(*kube, node);
  if (!k.ok()) return k.status();
  if (!k->unschedulable) return ActionResult{"", k->name + " schedulable already"};
  if (absl::Status s = kube->SetUnschedulable(k->name, false); !s.ok()) return s;
  return ActionResult{"", "uncordoned " + k->name};
}

// Pulls `image` on one node with the API its version has, into the profile's installer `store`
// on 1.13+ (below, the legacy pull has no store to choose); nodes without an image API validate
// the image in Upgrade itself. With `only_if_kept`, a node below 1.13 is not asked: its legacy
// Upgrade pulls into another store and refuses an image it cannot pull before it touches the
// node, so a pull beforehand would only add its time to the rollout. False when it did not
// pull: a node below 1.13 with `only_if_kept`, or one that cannot pull (Unimplemented).
absl::StatusOr<bool> PullOnNode(talos::TalosClient& talos, const std::string& address,
                                const std::string& image, core::InstallerStore store,
                                bool only_if_kept = false) {
  absl::StatusOr<talos::NodeVersion> version = talos.Version(address);
  if (!version.ok()) return version.status();
  const bool lifecycle = core::UsesLifecycleApi(version->version);
  if (only_if_kept && !lifecycle) return false;
  absl::Status pulled =
      lifecycle ? talos.PullImage(address, store, image).status()
                : talos.PullImageLegacy(address, talos::ContainerdNamespace::kSystem, image);
  if (absl::IsUnimplemented(pulled)) return false;
  // Talos' own words do not always name the image (an image-verification denial names only
  // the rule): say which one, keeping the code that decides what happens next.
  if (!pulled.ok()) {
    return absl::Status(pulled.code(),
                        fmt::format("pulling {}: {}", image, std::string(pulled.message())));
  }
  return true;
}

constexpr char kNodeNotAsked[] = "talos-reconciler/node-not-asked";

// A step's failure before its call that changes the node was made (AskedNodeNothing).
absl::Status BeforeAskingTheNode(absl::Status status) {
  status.SetPayload(kNodeNotAsked, absl::Cord("1"));
  return status;
}

// Writes (`mark` set) or removes the pending-install mark on `node`'s Kubernetes node
// (core/pending_mark.h), which outlives a status file restored from an older commit.
absl::Status MarkPending(kube::KubeClient* kube, const core::NodeSpec& node,
                         const std::optional<core::PendingInstallMark>& mark) {
  if (kube == nullptr) return absl::UnavailableError("the Kubernetes API is not reachable yet");
  absl::StatusOr<kube::KubeNode> k = KubeNodeOf(*kube, node);
  if (!k.ok()) return k.status();
  if (!mark && !k->pending_install) return absl::OkStatus();
  return kube->SetPendingInstall(
      k->name, mark ? std::optional<std::string>(core::EncodePendingMark(*mark)) : std::nullopt);
}

// Before a control plane reboots, the etcd leadership it holds moves to another member, so
// etcd does not sit out an election timeout without a leader while the node goes down (what
// `talosctl etcd forfeit-leadership` is for). Best effort: the start checks found every member
// healthy, so a refused hand-off costs one election, as a crash would; the reboot goes on and
// the returned note says why it was not handed off. Empty when there is nothing to say.
std::string HandOffEtcdLeadership(talos::TalosClient& talos, const core::ClusterProfile& profile,
                                  const core::NodeSpec& node) {
  if (node.role != core::NodeRole::kControlPlane) return "";
  const auto control_planes = std::count_if(
      profile.nodes.begin(), profile.nodes.end(),
      [](const core::NodeSpec& n) { return n.role == core::NodeRole::kControlPlane; });
  if (control_planes < 2) return "";
  absl::StatusOr<std::string> new_leader = talos.EtcdForfeitLeadership(node.address);
  if (!new_leader.ok()) {
    return "etcd leadership not handed off (" + std::string(new_leader.status().message()) +
           "); ";
  }
  if (new_leader->empty()) return "";
  return "etcd leadership handed to " + *new_leader + "; ";
}

// The etcd upgrade mutex held by another session (talos_answers.h) is not a refusal of the step:
// its lease expires within 60 s, so retry.
absl::Status RetryableUpgradeRefusal(const absl::Status& status) {
  if (talos::UpgradeMutexHeld(status)) return absl::UnavailableError(status.message());
  return status;
}

}  // namespace

bool AskedNodeNothing(const absl::Status& status) {
  return status.GetPayload(kNodeNotAsked).has_value() ||
         talos::HostApidCouldNotDial(status).has_value() || talos::EveryEndpointRefused(status);
}

struct TalosRolloutExecutor::Call {
  const core::ClusterProfile& profile;
  const core::RolloutDecision& decision;
  ClusterClients& clients;
  const core::NodeSpec* node;  // decision.node in the profile (Performer::on_node), else null
  std::stop_token stop;

  talos::TalosClient& talos() const { return *clients.talos; }
};

const std::map<core::ActionKind, TalosRolloutExecutor::Performer>&
TalosRolloutExecutor::Performers() {
  using core::ActionKind;
  using E = TalosRolloutExecutor;
  static const std::map<ActionKind, Performer> kPerformers = {
      {ActionKind::kPrePullImage, {&E::PrePull, false}},
      {ActionKind::kSnapshotEtcd, {&E::Snapshot, false}},
      {ActionKind::kCallUpgrade, {&E::CallUpgrade, true}},
      {ActionKind::kInstallImage, {&E::InstallImage, true}},
      {ActionKind::kDrainNode, {&E::Drain, true}},
      {ActionKind::kRebootNode, {&E::Reboot, true}},
      {ActionKind::kCompleteNode, {&E::Complete, true}},
      {ActionKind::kRollbackNode, {&E::Rollback, true}},
      {ActionKind::kInstallAhead, {&E::InstallAhead, true}},
      {ActionKind::kUnstageNode, {&E::Unstage, true}},
      {ActionKind::kActivatedEarly, {&E::ActivatedEarly, true}},
  };
  return kPerformers;
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::PrePull(const Call& call) {
  const core::ClusterProfile& profile = call.profile;
  const core::RolloutDecision& decision = call.decision;
  talos::TalosClient& talos = call.talos();
  // One thread per node: a pull takes as long as the registry, and the nodes pull at once.
  std::vector<absl::StatusOr<bool>> results(decision.nodes.size(), false);
  {
    std::vector<std::jthread> pulls;
    for (size_t i = 0; i < decision.nodes.size(); ++i) {
      const core::NodeSpec* node = FindNode(profile, decision.nodes[i]);
      if (node == nullptr) continue;
      pulls.emplace_back([&talos, &decision, &results, i, address = node->address,
                          store = profile.talos_installer_store] {
        NameThisThread("pre-pull");
        results[i] = PullOnNode(talos, address, decision.image, store, /*only_if_kept=*/true);
      });
    }
  }
  size_t pulled = 0;
  for (const absl::StatusOr<bool>& r : results) {
    if (!r.ok()) return r.status();
    if (*r) ++pulled;
  }
  // Say what happened: a node that pulled nothing (it now runs below 1.13, or cannot pull)
  // leaves the pull to its own upgrade, and is not counted as pulled.
  const size_t left = decision.nodes.size() - pulled;
  return ActionResult{
      "", left == 0 ? fmt::format("pulled {} on {} nodes", decision.image, pulled)
                    : fmt::format("pulled {} on {} of {} nodes ({} pull it at their upgrade)",
                                  decision.image, pulled, decision.nodes.size(), left)};
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::Snapshot(const Call& call) {
  const core::ClusterProfile& profile = call.profile;
  const std::filesystem::path file =
      EtcdSnapshotPath(options_.snapshot_dir, profile.name, env_.Now());
  if (absl::Status s = MakePrivateDirectory(options_.snapshot_dir); !s.ok()) return s;
  absl::Status last = absl::UnavailableError("no control plane to snapshot etcd from");
  for (const core::NodeSpec& node : profile.nodes) {
    if (node.role != core::NodeRole::kControlPlane) continue;
    absl::StatusOr<uint64_t> bytes = call.talos().EtcdSnapshot(node.address, file);
    if (!bytes.ok()) {
      last = bytes.status();
      continue;
    }
    // The new snapshot is safe on disk: older ones beyond the newest few only fill it.
    snapshots_.Added(profile.name, file);
    auto pruned = snapshots_.Prune(profile.name, options_.keep_snapshots);
    return ActionResult{
        "",
        fmt::format("etcd snapshot of {} bytes from {} in {}; {}", *bytes, node.name, file.string(),
                    pruned.ok() ? fmt::format("{} older deleted", pruned->size())
                                : std::string(pruned.status().message()))};
  }
  return last;
}

std::string TalosRolloutExecutor::Progress(const std::string& cluster) {
  MutexLock lock(held_mu_);
  auto it = held_.find(cluster);
  return it == held_.end() ? "" : it->second;
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::Drain(const Call& call) {
  const core::ClusterProfile& profile = call.profile;
  const core::NodeSpec& node = *call.node;
  kube::KubeClient* kube = call.clients.kube.get();
  if (kube == nullptr) return absl::UnavailableError("the Kubernetes API is not reachable yet");
  absl::StatusOr<kube::KubeNode> k = KubeNodeOf(*kube, node);
  if (!k.ok()) return k.status();
  const std::string& name = k->name;
  // The profile's policy.drain, its timeout falling back to the daemon's --drain-timeout.
  kube::DrainOptions options = options_.drain;
  if (profile.policy.drain.timeout) options.timeout = *profile.policy.drain.timeout;
  options.on_timeout = profile.policy.drain.on_timeout;
  options.on_held = [this, &profile](const std::string& held) {
    MutexLock lock(held_mu_);
    held_[profile.name] = held;
  };
  absl::StatusOr<kube::DrainResult> drained = kube::DrainNode(*kube, name, options, env_, call.stop);
  {
    MutexLock lock(held_mu_);
    held_.erase(profile.name);
  }
  if (!drained.ok()) return drained.status();
  if (drained->forced.empty()) return ActionResult{"", "drained " + name};
  return ActionResult{
      "", fmt::format("drained {}; forced: deleted pods {} past the drain timeout of {}s "
                      "(policy.drain.onTimeout: force)",
                      name, fmt::join(drained->forced, ", "),
                      std::chrono::duration_cast<std::chrono::seconds>(options.timeout).count())};
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::CallUpgrade(const Call& call) {
  const std::string handed_off = HandOffEtcdLeadership(call.talos(), call.profile, *call.node);
  absl::StatusOr<talos::UpgradeAck> ack = call.talos().Upgrade(
      call.node->address, {call.decision.image, /*preserve=*/true, false, false, false});
  if (!ack.ok()) return RetryableUpgradeRefusal(ack.status());
  return ActionResult{ack->actor_id, handed_off + ack->ack};
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::InstallImage(const Call& call) {
  return InstallOnNode(call, call.decision.image);
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::InstallOnNode(const Call& call,
                                                               const std::string& image) {
  // LifecycleService/Upgrade installs only an image already in the store: pull right before
  // (at once when the pre-pull's copy is still there; again after a reboot or a restart in
  // between), as talosctl upgrade does.
  const core::InstallerStore store = call.profile.talos_installer_store;
  const std::string& address = call.node->address;
  if (auto pulled = PullOnNode(call.talos(), address, image, store); !pulled.ok()) {
    return BeforeAskingTheNode(pulled.status());
  }
  auto installed = call.talos().LifecycleUpgrade(address, image, store, {});
  if (!installed.ok()) return installed.status();
  return ActionResult{"", "installed " + image};
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::InstallAhead(const Call& call) {
  absl::StatusOr<ActionResult> installed = InstallOnNode(call, call.decision.image);
  if (!installed.ok() || !call.decision.staged) return installed;
  const core::StagedInstall& staged = *call.decision.staged;
  // The status file records the install before the next one; the mark is a second copy, so a
  // Kubernetes API that refuses it now does not undo the install.
  const absl::Status marked = MarkPending(
      call.clients.kube.get(), *call.node,
      core::PendingInstallMark{staged.target, staged.schematic, staged.boot_id});
  installed->detail += marked.ok() ? "; pending reboot, marked on its Kubernetes node"
                                   : "; pending reboot (not marked on its Kubernetes node: " +
                                         std::string(marked.message()) + ")";
  return installed;
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::Unstage(const Call& call) {
  if (call.decision.image.empty()) {  // nothing left on the node: only its mark goes
    if (absl::Status s = MarkPending(call.clients.kube.get(), *call.node, std::nullopt); !s.ok()) {
      return s;
    }
    return ActionResult{"", "pending-install mark removed"};
  }
  absl::StatusOr<ActionResult> installed = InstallOnNode(call, call.decision.image);
  if (!installed.ok()) return installed;
  installed->detail = "un-staged: " + installed->detail;
  // A mark left behind is removed at a later look (it then names an older boot).
  (void)MarkPending(call.clients.kube.get(), *call.node, std::nullopt);
  return installed;
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::ActivatedEarly(const Call& call) {
  (void)MarkPending(call.clients.kube.get(), *call.node, std::nullopt);
  return ActionResult{"", call.node->name + " runs its pending install"};
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::Reboot(const Call& call) {
  const std::string handed_off = HandOffEtcdLeadership(call.talos(), call.profile, *call.node);
  absl::StatusOr<std::string> actor =
      call.talos().Reboot(call.node->address, talos::RebootMode::kDefault);
  if (!actor.ok()) return actor.status();
  return ActionResult{*actor, handed_off + "reboot requested"};
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::Complete(const Call& call) {
  // Installed ahead: the mark must go with the node's completion, or a later look would take it
  // for a node that booted its install by itself.
  if (call.profile.policy.install == core::InstallTiming::kAhead) {
    if (absl::Status s = MarkPending(call.clients.kube.get(), *call.node, std::nullopt); !s.ok()) {
      return s;
    }
  }
  return Uncordon(call.clients.kube.get(), *call.node, call.decision.seen_cordoned);
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::Rollback(const Call& call) {
  if (absl::Status s = call.talos().Rollback(call.node->address); !s.ok()) return s;
  return ActionResult{"", "rollback requested"};
}

absl::StatusOr<ActionResult> TalosRolloutExecutor::Execute(const core::ClusterProfile& profile,
                                                           const core::RolloutDecision& decision,
                                                           std::stop_token stop) {
  absl::StatusOr<ClusterClients> clients = clients_.ForProfile(profile);
  if (!clients.ok()) return clients.status();
  const auto performer = Performers().find(decision.kind);
  const core::NodeSpec* node = FindNode(profile, decision.node);
  const bool whole_cluster = performer != Performers().end() && !performer->second.on_node;
  if (!whole_cluster && node == nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("{} is not a node of {}", decision.node, profile.name));
  }
  if (performer == Performers().end()) return ActionResult{};
  return (this->*performer->second.step)(Call{profile, decision, *clients, node, stop});
}

}  // namespace tr::reconciler
