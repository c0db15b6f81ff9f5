#include "reconciler/observer.h"

#include <set>

#include "reconciler/error_class.h"

namespace tr::reconciler {
namespace {

// A node whose Version call fails in a way a retry can fix is reported unreachable.
bool Unreachable(const absl::Status& s) {
  return ClassifyError(s, ErrorSource::kObserve) == ErrorClass::kRetry;
}

// Talos facts of one node. Returns an error only for what unreachability does not explain.
absl::Status ObserveTalos(talos::TalosClient& talos, const core::NodeSpec& spec,
                          core::NodeObservation& node) {
  absl::StatusOr<talos::NodeVersion> version = talos.Version(spec.address);
  if (!version.ok()) {
    if (Unreachable(version.status())) {
      node.reachable = false;
      node.ready = false;
      return absl::OkStatus();
    }
    return version.status();
  }
  node.talos = version->version;
  if (absl::StatusOr<std::string> boot = talos.BootId(spec.address); boot.ok()) {
    node.boot_id = *boot;
  }
  absl::StatusOr<talos::MachineStatus> machine = talos.GetMachineStatus(spec.address);
  node.stage = machine.ok() ? machine->stage : core::MachineStage::kUnknown;
  node.ready = machine.ok() && machine->ready;
  if (spec.role != core::NodeRole::kControlPlane) return absl::OkStatus();
  absl::StatusOr<talos::EtcdMemberStatus> etcd = talos.EtcdStatus(spec.address);
  node.etcd_healthy = etcd.ok() && etcd->errors.empty();
  node.etcd_member = false;
  if (etcd.ok()) {
    node.etcd_leader = etcd->leader != 0 && etcd->leader == etcd->member_id;
    if (absl::StatusOr<std::vector<talos::EtcdMember>> members = talos.EtcdMemberList(spec.address);
        members.ok()) {
      for (const talos::EtcdMember& m : *members) {
        if (m.id == etcd->member_id && !m.is_learner) node.etcd_member = true;
      }
    }
  }
  return absl::OkStatus();
}

const kube::KubeNode* MatchKubeNode(const std::vector<kube::KubeNode>& nodes,
                                    const core::NodeSpec& spec) {
  for (const kube::KubeNode& n : nodes) {
    if (n.name == spec.name) return &n;
  }
  for (const kube::KubeNode& n : nodes) {
    for (const std::string& address : n.addresses) {
      if (address == spec.address) return &n;
    }
  }
  return nullptr;
}

// Kubernetes facts: the kubelet version, and Ready / cordoned folded into the node's state.
void ObserveKube(const std::vector<kube::KubeNode>* kube_nodes, const core::NodeSpec& spec,
                 core::NodeObservation& node) {
  const kube::KubeNode* k = kube_nodes ? MatchKubeNode(*kube_nodes, spec) : nullptr;
  if (k == nullptr) {
    node.ready = false;
    return;
  }
  if (absl::StatusOr<core::Version> v = core::ParseKubernetesVersion(k->kubelet_version); v.ok()) {
    node.kubelet = *v;
  }
  node.ready = node.ready && k->ready;
  node.schedulable = !k->unschedulable;
}

}  // namespace

absl::StatusOr<core::ObservedCluster> TalosFleetObserver::Observe(
    const core::ClusterProfile& profile) {
  absl::StatusOr<ClusterClients> clients = clients_.ForProfile(profile);
  if (!clients.ok()) return clients.status();
  std::optional<std::vector<kube::KubeNode>> kube_nodes;
  if (clients->kube) {
    if (auto listed = clients->kube->ListNodes(); listed.ok()) kube_nodes = *std::move(listed);
  }
  core::ObservedCluster observed;
  observed.name = profile.name;
  for (const core::NodeSpec& spec : profile.nodes) {
    core::NodeObservation node;
    node.name = spec.name;
    if (absl::Status s = ObserveTalos(*clients->talos, spec, node); !s.ok()) return s;
    if (node.reachable) ObserveKube(kube_nodes ? &*kube_nodes : nullptr, spec, node);
    if (spec.name == self_node_) observed.self_node = spec.name;
    observed.nodes.push_back(std::move(node));
  }
  return observed;
}

}  // namespace tr::reconciler
