#include "reconciler/operations/adoption.h"

#include "base/hmac.h"
#include "fmt/format.h"
#include "reconciler/operations/k8s_upgrade/config_survey.h"
#include "reconciler/operations/k8s_upgrade/machine_config.h"
#include "reconciler/operations/observer.h"

namespace tr::reconciler {
namespace {

// The control planes as etcd lists them, asked of the first of `ask_first` that answers.
absl::StatusOr<std::vector<core::NodeSpec>> EtcdControlPlanes(
    talos::TalosClient& talos, const std::vector<std::string>& ask_first) {
  absl::Status last = absl::FailedPreconditionError("no node to ask");
  for (const std::string& node : ask_first) {
    absl::StatusOr<std::vector<talos::EtcdMember>> members = talos.EtcdMemberList(node);
    if (!members.ok()) {
      last = members.status();
      continue;
    }
    std::vector<core::NodeSpec> control_planes;
    for (const talos::EtcdMember& m : *members) {
      if (m.peer_urls.empty()) continue;
      control_planes.push_back(
          {m.hostname, PeerUrlHost(m.peer_urls.front()), core::NodeRole::kControlPlane});
    }
    if (!control_planes.empty()) return control_planes;
  }
  return absl::FailedPreconditionError(fmt::format(
      "no control plane listed etcd's members (asked {}): {}", fmt::join(ask_first, ", "),
      std::string(last.message())));
}

core::AdoptedNode FromKube(const kube::KubeNode& k) {
  core::AdoptedNode node;
  node.name = k.name;
  node.address = !k.internal_ip.empty() ? k.internal_ip
                                        : (k.addresses.empty() ? "" : k.addresses.front());
  node.role = k.control_plane ? core::NodeRole::kControlPlane : core::NodeRole::kWorker;
  return node;
}

}  // namespace

std::optional<core::FactoryInstaller> ProvenSchematic(const std::vector<core::AdoptedNode>& nodes) {
  std::optional<core::SchematicCandidate> candidate = core::FindSchematicCandidate(nodes);
  if (!candidate || candidate->installer.schematic.official_extensions.empty()) return std::nullopt;
  if (Sha256Hex(core::SchematicYaml(candidate->installer.schematic)) != candidate->id) {
    return std::nullopt;
  }
  return candidate->installer;
}

std::string PeerUrlHost(const std::string& url) {
  std::string host = url;
  if (const size_t scheme = host.find("://"); scheme != std::string::npos) {
    host = host.substr(scheme + 3);
  }
  if (host.starts_with("[")) return host.substr(1, host.find(']') - 1);
  return host.substr(0, host.find(':'));
}

absl::StatusOr<std::vector<core::AdoptedNode>> ObserveForAdoption(
    ClusterClientFactory& clients, const core::ClusterProfile& seed,
    const std::vector<std::string>& ask_first) {
  absl::StatusOr<ClusterClients> first = clients.ForProfile(seed);
  if (!first.ok()) return first.status();
  absl::StatusOr<std::vector<core::NodeSpec>> control_planes =
      EtcdControlPlanes(*first->talos, ask_first);
  if (!control_planes.ok()) return control_planes.status();
  // The control planes hand out the admin kubeconfig; Kubernetes names every node.
  core::ClusterProfile profile = seed;
  profile.nodes = *control_planes;
  absl::StatusOr<ClusterClients> with_kube = clients.ForProfile(profile);
  if (!with_kube.ok()) return with_kube.status();
  if (!with_kube->kube) {
    return absl::FailedPreconditionError(
        "the Kubernetes API did not answer through the admin kubeconfig the control planes "
        "hand out (talosctl kubeconfig)");
  }
  absl::StatusOr<std::vector<kube::KubeNode>> listed = with_kube->kube->ListNodes();
  if (!listed.ok()) {
    return absl::FailedPreconditionError(
        fmt::format("listing the Kubernetes nodes: {}", std::string(listed.status().message())));
  }
  std::vector<core::AdoptedNode> nodes;
  profile.nodes.clear();
  for (const kube::KubeNode& k : *listed) {
    nodes.push_back(FromKube(k));
    profile.nodes.push_back({nodes.back().name, nodes.back().address, nodes.back().role});
  }
  TalosFleetObserver observer(clients, "");
  absl::StatusOr<core::ObservedCluster> observed = observer.Observe(profile);
  if (!observed.ok()) return observed.status();
  for (core::AdoptedNode& node : nodes) {
    if (const core::NodeObservation* seen = observed->FindNode(node.name)) node.seen = *seen;
    if (!node.seen.reachable) continue;
    absl::StatusOr<std::string> config =
        k8s_upgrade::ReadMachineConfig(*with_kube->talos, node.address, node.name);
    if (!config.ok()) continue;
    absl::StatusOr<std::string> image = k8s_upgrade::InstallerImage(*config);
    if (image.ok()) node.install_image = *image;
  }
  return nodes;
}

}  // namespace tr::reconciler
