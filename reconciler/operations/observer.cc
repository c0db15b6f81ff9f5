#include "reconciler/operations/observer.h"

#include <algorithm>
#include <map>
#include <optional>

#include "core/pending_mark.h"
#include "reconciler/clients/talos/talos_answers.h"
#include "reconciler/operations/error_class.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler {
namespace {

// How long the status a look saw stands for a look after it, while the watch that look
// started has sent nothing (NodeWatches::SeenAtStart): a turn of the same reconcile, not a
// later poll.
constexpr std::chrono::milliseconds kSeenAtStartFresh{1000};

// How long a look waits for the first status of the watch it started instead of asking the
// node. A node that answers sends it at once; past this the look asks the node after all.
constexpr std::chrono::milliseconds kFirstStatusWait{std::chrono::seconds(5)};

// A node whose Version call fails in a way a retry can fix is reported unreachable.
bool Unreachable(const absl::Status& s) {
  return ClassifyError(s, ErrorSource::kObserve) == ErrorClass::kRetry;
}

// The etcd member list is the cluster's, not a node's: asked once per observation (or per pass,
// EtcdReadings), of the first control plane that answers, and again of a node whose member it
// does not list; and not at all for a member the cluster's last list held as a voter
// (EtcdVoters).
class EtcdMembers {
 public:
  EtcdMembers(std::optional<std::vector<talos::EtcdMember>>& list, EtcdVoters& voters,
              const std::string& cluster)
      : list_(list), voters_(voters), cluster_(cluster) {}
  // Whether `member_id` is a voting member, as `node`'s cluster sees it.
  bool Voting(talos::TalosClient& talos, const std::string& node, uint64_t member_id) {
    if (!list_ && voters_.Known(cluster_, member_id)) return true;
    if (!list_ || !Listed(*list_, member_id)) {
      absl::StatusOr<std::vector<talos::EtcdMember>> members = talos.EtcdMemberList(node);
      if (!members.ok()) return false;
      list_ = *std::move(members);
      voters_.Replace(cluster_, *list_);
    }
    for (const talos::EtcdMember& m : *list_) {
      if (m.id == member_id && !m.is_learner) return true;
    }
    return false;
  }

 private:
  static bool Listed(const std::vector<talos::EtcdMember>& list, uint64_t id) {
    return std::any_of(list.begin(), list.end(), [&](const auto& m) { return m.id == id; });
  }
  std::optional<std::vector<talos::EtcdMember>>& list_;
  EtcdVoters& voters_;
  const std::string& cluster_;
};

// A control plane's etcd member from its status: healthy, leading, voting.
void ObserveEtcdMember(talos::TalosClient& talos, const core::NodeSpec& spec,
                       const absl::StatusOr<talos::EtcdMemberStatus>& etcd, EtcdMembers& members,
                       core::NodeObservation& node) {
  node.etcd_healthy = etcd.ok() && etcd->errors.empty();
  node.etcd_member = false;
  node.etcd_leader = false;
  if (etcd.ok()) {
    node.etcd_leader = etcd->leader != 0 && etcd->leader == etcd->member_id;
    node.etcd_member = members.Voting(talos, spec.address, etcd->member_id);
  }
}

// The etcd members of the control planes `asked` (node name → its observation), their statuses
// asked in one call where apid proxies it to each (TalosClient::EtcdStatuses); one call a node
// where it refuses to (Unimplemented, InvalidArgument). A node the call did not reach, or the
// call as a whole when no endpoint answered it, reads as a status that failed.
void ObserveEtcdMembers(talos::TalosClient& talos, const core::ClusterProfile& profile,
                        const std::map<std::string, core::NodeObservation*>& asked,
                        EtcdMembers& members) {
  std::vector<std::string> addresses;
  for (const core::NodeSpec& spec : profile.nodes) {
    if (asked.contains(spec.name)) addresses.push_back(spec.address);
  }
  absl::StatusOr<talos::TalosClient::EtcdStatusOfEach> each = talos.EtcdStatuses(addresses);
  if (absl::IsUnimplemented(each.status()) || absl::IsInvalidArgument(each.status())) {
    each = talos.TalosClient::EtcdStatuses(addresses);
  }
  for (const core::NodeSpec& spec : profile.nodes) {
    auto node = asked.find(spec.name);
    if (node == asked.end()) continue;
    if (!each.ok()) {
      ObserveEtcdMember(talos, spec, each.status(), members, *node->second);
    } else if (auto found = each->find(spec.address); found != each->end()) {
      ObserveEtcdMember(talos, spec, found->second, members, *node->second);
    }
  }
}

// The node's pending-install mark, when its annotation parses; a value that does not is
// reported (once per look: each node is looked at once) and read as no mark.
std::optional<core::PendingInstallMark> PendingMarkOfNode(const kube::KubeNode& k,
                                                          const std::string& node) {
  if (!k.pending_install) return std::nullopt;
  std::optional<core::PendingInstallMark> mark = core::ParsePendingMark(*k.pending_install);
  if (!mark) {
    ModuleLogger("rollout")->warn(
        "step=observe node={} annotation={} value={} outcome=malformed-ignored", LogValue(node),
        core::kPendingInstallAnnotation, LogValue(*k.pending_install));
  }
  return mark;
}

// Kubernetes facts: the kubelet version, Ready / cordoned folded into the node's state, and the
// pending-install mark.
void ObserveKube(const std::vector<kube::KubeNode>* kube_nodes, const core::NodeSpec& spec,
                 core::NodeObservation& node) {
  const kube::KubeNode* k =
      kube_nodes ? kube::FindKubeNode(*kube_nodes, spec.name, spec.address) : nullptr;
  if (k == nullptr) {
    node.ready = false;
    return;
  }
  if (absl::StatusOr<core::Version> v = core::ParseKubernetesVersion(k->kubelet_version); v.ok()) {
    node.kubelet = *v;
  }
  node.ready = node.ready && k->ready;
  node.schedulable = !k->unschedulable;
  node.pending_mark = PendingMarkOfNode(*k, spec.name);
}

}  // namespace

absl::StatusOr<std::string> TalosFleetObserver::BootId(talos::TalosClient& talos,
                                                       const std::string& cluster,
                                                       const std::string& address,
                                                       const std::string& key,
                                                       const talos::MachineStatus& status,
                                                       std::optional<NodeWatches::Known>& watch) {
  if (watch && !watch->boot_id.empty()) return watch->boot_id;
  std::optional<std::string> known = KnownBootOf(key, status);
  absl::StatusOr<std::string> boot = known ? *std::move(known) : talos.BootId(address);
  // Read while the watch was live, or known for the status it holds: true for as long as the
  // watch lasts (one boot).
  if (watch && boot.ok()) watches_->RecordBootId(cluster, address, watch->watch, *boot);
  return boot;
}

std::optional<std::string> TalosFleetObserver::KnownBootOf(const std::string& key,
                                                           const talos::MachineStatus& status) {
  // A status a look had before it read the boot id is that boot's: machined makes its
  // MachineStatus anew at every boot (docs/talos-api.md).
  if (!status.created.empty()) {
    MutexLock lock(mu_);
    auto it = boots_.find(key);
    if (it != boots_.end() && it->second.status_created == status.created) {
      return it->second.boot_id;
    }
  }
  return std::nullopt;
}

// Talos facts of one node: the boot id first (the status before it when no watch holds it,
// which ties the boot id to the watch started after), and the version only when the boot is
// new to this process (a version changes only across a reboot). Returns an error only for
// what unreachability does not explain.
absl::Status TalosFleetObserver::ObserveTalos(const std::shared_ptr<talos::TalosClient>& client,
                                              const std::string& cluster,
                                              const core::NodeSpec& spec, bool watched,
                                              bool in_flight, core::NodeObservation& node,
                                              bool& refused) {
  talos::TalosClient& talos = *client;
  std::optional<NodeWatches::Known> watch;
  if (watched) watch = watches_->Find(cluster, spec.address, client.get());
  const auto unreachable = [&](const absl::Status& why) {
    node.reachable = false;
    node.ready = false;
    refused = refused || talos::EveryEndpointRefused(why);
  };
  // A node in flight whose watch fell went down with it: the look its fall woke takes it as
  // down, where asking cost a call through an endpoint to a node that was rebooting. Once
  // only: the looks after ask, so a watch that broke while its node stayed up costs that node
  // one look read as down, and the next reads it up.
  if (watched && !watch && in_flight && watches_->TakeFall(cluster, spec.address, client.get())) {
    node.reachable = false;
    node.ready = false;
    return absl::OkStatus();
  }
  // A watch the look a moment ago started (the same reconcile's last turn, typically, which
  // found the node back from its reboot) has not sent its first status yet: what that look saw
  // stands, as if this look had come then.
  std::optional<talos::MachineStatus> seen_at_start;
  if (watched && !watch) {
    seen_at_start = watches_->SeenAtStart(cluster, spec.address, client.get(), kSeenAtStartFresh);
  }
  // In a watched cluster the node's status comes from the watch the look would start once the
  // node answered: its first status is that answer, and the call that asked for it is spared.
  // A watch that does not go live is no answer: the node is asked as before, whose call tries
  // each endpoint with its connect timeout and says why none answered (EveryEndpointRefused),
  // which a stream does not. So a node that is down is asked twice by such a look.
  if (watched && !watch && !seen_at_start) {
    absl::StatusOr<NodeWatches::Known> started =
        watches_->StartAndAwait(cluster, spec.address, client, kFirstStatusWait);
    if (started.ok()) watch = *std::move(started);
  }
  talos::MachineStatus machine;
  if (watch) {
    machine = watch->machine;
  } else if (seen_at_start) {
    machine = *std::move(seen_at_start);
  } else if (absl::StatusOr<talos::MachineStatus> asked = talos.GetMachineStatus(spec.address);
             asked.ok()) {
    machine = *std::move(asked);
  } else if (Unreachable(asked.status())) {
    unreachable(asked.status());
    return absl::OkStatus();
  }
  const std::string key = cluster + "/" + spec.address;
  absl::StatusOr<std::string> boot = BootId(talos, cluster, spec.address, key, machine, watch);
  if (!boot.ok() && Unreachable(boot.status())) {
    unreachable(boot.status());
    return absl::OkStatus();
  }
  if (boot.ok()) {
    node.boot_id = *boot;
    MutexLock lock(mu_);
    if (auto it = boots_.find(key); it != boots_.end() && it->second.boot_id == *boot) {
      node.talos = it->second.talos;
      if (!machine.created.empty()) it->second.status_created = machine.created;
    }
  }
  if (!node.talos) {
    absl::StatusOr<talos::NodeVersion> version = talos.Version(spec.address);
    if (!version.ok()) {
      if (!Unreachable(version.status())) return version.status();
      unreachable(version.status());
      return absl::OkStatus();
    }
    node.talos = version->version;
    // Without os:admin there is no boot id to key the version by: asked every time.
    if (!node.boot_id.empty()) {
      MutexLock lock(mu_);
      boots_[key] = BootFacts{node.boot_id, version->version, std::nullopt, machine.created};
    }
  }
  ObserveExtensions(talos, key, spec, node);
  node.stage = machine.stage;
  node.ready = machine.ready;
  node.watched = watch.has_value();
  // The node answered: watched from now on, read from the watch once it sent the status.
  if (watched) {
    watches_->Ensure(cluster, spec.address, client, machine,
                     !watch && boot.ok() ? *boot : std::string());
  }
  return absl::OkStatus();
}

void TalosFleetObserver::ObserveExtensions(talos::TalosClient& talos, const std::string& key,
                                           const core::NodeSpec& spec,
                                           core::NodeObservation& node) {
  std::optional<talos::NodeExtensions> known;
  {
    MutexLock lock(mu_);
    if (auto it = boots_.find(key); it != boots_.end() && it->second.boot_id == node.boot_id) {
      known = it->second.extensions;
    }
  }
  if (!known) {
    absl::StatusOr<std::vector<talos::CosiResource>> listed =
        talos.CosiList(spec.address, talos::kRuntimeNamespace, talos::kExtensionStatusType);
    // Not known is not "none": a failed listing is asked again at the next observation.
    if (!listed.ok()) {
      node.extensions_observed = false;
      return;
    }
    known = talos::ReadNodeExtensions(*listed);
    MutexLock lock(mu_);
    if (auto it = boots_.find(key); it != boots_.end() && it->second.boot_id == node.boot_id) {
      it->second.extensions = known;
    }
  }
  node.schematic = known->schematic;
  node.extensions = known->extensions;
}

absl::StatusOr<core::ObservedCluster> TalosFleetObserver::ObserveSome(
    const core::ClusterProfile& profile, const std::vector<std::string>* only, bool etcd) {
  absl::StatusOr<ClusterClients> clients = clients_.ForProfile(profile);
  if (!clients.ok()) return clients.status();
  // The node list is asked once, when the first reachable node needs it: following a node
  // that is down (most of an upgrade) asks Talos only.
  std::optional<std::vector<kube::KubeNode>> kube_nodes;
  bool kube_asked = false;
  const bool watched = watches_ && watches_->Looked(profile.name);
  auto kube_list = [&]() -> const std::vector<kube::KubeNode>* {
    if (!kube_asked && clients->kube) {
      kube_asked = true;
      if (watched) kube_nodes = watches_->KubeNodes(profile.name, clients->kube);
      if (!kube_nodes) {
        if (auto listed = clients->kube->ListNodes(); listed.ok()) kube_nodes = *std::move(listed);
      }
    }
    return kube_nodes ? &*kube_nodes : nullptr;
  };
  if (watched && only == nullptr) {
    std::vector<std::string> addresses;
    for (const core::NodeSpec& spec : profile.nodes) addresses.push_back(spec.address);
    watches_->KeepOnly(profile.name, addresses);
  }
  core::ObservedCluster observed;
  observed.name = profile.name;
  observed.etcd_observed = etcd;
  std::optional<std::vector<talos::EtcdMember>> member_list;
  EtcdMembers members(member_list, voters_, profile.name);
  bool refused = false;  // an endpoint refused the connection or failed the TLS handshake
  std::vector<std::string> etcd_asked;  // the reachable control planes, when etcd is looked at
  for (const core::NodeSpec& spec : profile.nodes) {
    if (only && std::find(only->begin(), only->end(), spec.name) == only->end()) continue;
    core::NodeObservation node;
    node.name = spec.name;
    // The nodes a look is told to look at alone are those in flight (FleetObserver).
    if (absl::Status s = ObserveTalos(clients->talos, profile.name, spec, watched,
                                      /*in_flight=*/only != nullptr, node, refused);
        !s.ok()) {
      return s;
    }
    if (etcd && node.reachable && spec.role == core::NodeRole::kControlPlane) {
      etcd_asked.push_back(spec.name);
    }
    if (node.reachable) ObserveKube(kube_list(), spec, node);
    if (spec.name == self_node_) observed.self_node = spec.name;
    observed.nodes.push_back(std::move(node));
  }
  if (!etcd_asked.empty()) {
    std::map<std::string, core::NodeObservation*> asked;
    for (const std::string& name : etcd_asked) asked[name] = observed.FindNode(name);
    ObserveEtcdMembers(*clients->talos, profile, asked, members);
  }
  // No node answers and the endpoints turn the connection down at once: another cluster's
  // talosconfig reads exactly so, and the handshake says which half of it does not fit. A node
  // that merely does not answer (down, blackholed) costs no second wait.
  const bool none = std::none_of(observed.nodes.begin(), observed.nodes.end(),
                                 [](const core::NodeObservation& n) { return n.reachable; });
  if (only == nullptr && none && refused) {
    if (absl::Status why = clients_.DiagnoseUnreachable(profile); absl::IsFailedPrecondition(why)) {
      return why;
    }
  }
  return observed;
}

absl::StatusOr<core::ObservedCluster> TalosFleetObserver::Observe(
    const core::ClusterProfile& profile) {
  return ObserveSome(profile, nullptr, /*etcd=*/true);
}

absl::StatusOr<core::ObservedCluster> TalosFleetObserver::ObserveNodes(
    const core::ClusterProfile& profile, const std::vector<std::string>& nodes) {
  return ObserveSome(profile, &nodes, /*etcd=*/true);
}

absl::StatusOr<core::ObservedCluster> TalosFleetObserver::ObserveNodesWithoutEtcd(
    const core::ClusterProfile& profile, const std::vector<std::string>& nodes) {
  return ObserveSome(profile, &nodes, /*etcd=*/false);
}

absl::StatusOr<core::ObservedCluster> TalosFleetObserver::ObserveWithoutEtcd(
    const core::ClusterProfile& profile) {
  return ObserveSome(profile, nullptr, /*etcd=*/false);
}

absl::Status TalosFleetObserver::ObserveEtcd(const core::ClusterProfile& profile,
                                             core::ObservedCluster& observed) {
  EtcdReadings none;
  return ObserveEtcdReusing(profile, observed, none);
}

absl::Status TalosFleetObserver::ObserveEtcdReusing(const core::ClusterProfile& profile,
                                                    core::ObservedCluster& observed,
                                                    EtcdReadings& pass) {
  if (observed.etcd_observed) return absl::OkStatus();
  absl::StatusOr<ClusterClients> clients = clients_.ForProfile(profile);
  if (!clients.ok()) return clients.status();
  EtcdMembers members(pass.members, voters_, profile.name);
  std::map<std::string, core::NodeObservation*> asked;
  for (const core::NodeSpec& spec : profile.nodes) {
    core::NodeObservation* node = observed.FindNode(spec.name);
    if (!node || !node->reachable || spec.role != core::NodeRole::kControlPlane) continue;
    if (auto read = pass.nodes.find(spec.name); read != pass.nodes.end()) {
      node->etcd_healthy = read->second.healthy;
      node->etcd_member = read->second.member;
      node->etcd_leader = read->second.leader;
      continue;
    }
    asked[spec.name] = node;
  }
  if (!asked.empty()) ObserveEtcdMembers(*clients->talos, profile, asked, members);
  for (const auto& [name, node] : asked) {
    pass.nodes[name] = {node->etcd_healthy, node->etcd_member, node->etcd_leader};
  }
  observed.etcd_observed = true;
  return absl::OkStatus();
}

}  // namespace tr::reconciler
