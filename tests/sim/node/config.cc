// Machine configuration of a simulated node: a rendered v1alpha1 document, ApplyConfiguration
// with its modes by version (facts §3.4), and the images the configuration selects.
#include "core/version.h"
#include "fmt/format.h"
#include "machine/machine.pb.h"
#include "tests/sim/catalog/config_documents.h"
#include "tests/sim/catalog/image_verification.h"
#include "tests/sim/node/sim_cluster.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

using Mode = machine::ApplyConfigurationRequest;

// Since Talos 1.5 a machine configuration may hold more documents than v1alpha1 (network
// rules, extension services, ...). Workers on Talos 1.6 or later carry two, written as a person
// would (comments, flow style, quotes), so that whoever patches the configuration shows whether
// it gives them back unchanged.
constexpr const char* kWorkerExtraDocuments =
    "--- # kubelet ingress from the node network only\n"
    "apiVersion: v1alpha1\nkind: NetworkRuleConfig\nname: 'kubelet-ingress'\n"
    "portSelector: {ports: [10250], protocol: tcp}\ningress:\n  - subnet: \"10.0.0.0/8\"\n"
    "---\napiVersion: v1alpha1\nkind: NetworkDefaultActionConfig\ningress:   block\n";

bool HasExtraDocuments(const SimNode& node) {
  auto version = core::ParseTalosVersion(node.tag);
  return !node.is_control_plane() && version.ok() && version->Minor() >= core::MinorVersion{1, 6};
}

std::string InstallerImage(const NodeSpec& spec, const std::string& tag) {
  return InitialInstallerImage(spec.platform, spec.schematic, tag);
}

// The 1.14 generated documents that replace .machine.install and .cluster.{clusterName,
// controlPlane} (generate/init.go, kubernetes.go at v1.14.0-rc.1; no secrets in the simulator).
std::string GeneratedMultidocDocuments(const NodeSpec& spec, const std::string& cluster,
                                       const std::string& endpoint, const std::string& tag) {
  return fmt::format(
      "---\napiVersion: v1alpha1\nkind: UnattendedInstallConfig\ninstaller:\n  image: {}\n"
      "provisioning:\n  diskSelector:\n    match: disk.dev_path == \"/dev/sda\"\n"
      "  wipe: false\n---\napiVersion: v1alpha1\nkind: KubeClusterConfig\nclusterName: {}\n"
      "endpoint: https://{}:6443\n",
      InstallerImage(spec, tag), cluster, endpoint);
}

}  // namespace

std::string SimCluster::RenderMachineConfigLocked(const SimNode& node) const {
  const SimNode* first_cp = nullptr;
  for (const auto& n : nodes_) {
    if (n->is_control_plane() && first_cp == nullptr) first_cp = n.get();
  }
  auto image = [&](const char* name) {
    auto it = node.images.find(name);
    return it == node.images.end() ? std::string() : it->second;
  };
  const core::MinorVersion talos = core::ParseTalosVersion(node.tag).value().Minor();
  const ConfigShape shape = node.spec.config;
  const bool multidoc = GeneratedMultidoc(shape, talos);
  // v1alpha1 first, each section only where the shape keeps it there; the documents after.
  std::string machine, cluster, documents;
  if (!multidoc) {
    machine += fmt::format("  install:\n    disk: /dev/sda\n    image: {}\n",
                           InstallerImage(node.spec, node.tag));
    cluster += fmt::format("  clusterName: {}\n  controlPlane:\n    endpoint: https://{}:6443\n",
                           spec_.name, first_cp->address);
  }
  for (const ComponentPlace& place : ComponentPlaces()) {
    // Workers carry the kubelet and, in v1alpha1 only, .cluster.proxy (as before 1.14).
    const bool in_document = InDocument(shape, talos, place.component);
    if (place.control_plane_only && !node.is_control_plane() &&
        (in_document || place.key != std::string_view("proxy"))) {
      continue;
    }
    if (in_document) {
      documents += ComponentDocument(place, image(place.component));
    } else {
      (place.section == std::string_view("machine") ? machine : cluster) +=
          fmt::format("  {}:\n    image: {}\n", place.key, image(place.component));
    }
  }
  std::string out = fmt::format(
      "version: v1alpha1\ndebug: false\npersist: true\nmachine:\n  type: {}\n{}  network:\n"
      "    hostname: {}\ncluster:{}",
      NodeRoleName(node.spec.role), machine, node.spec.name,
      cluster.empty() ? std::string(" {}\n") : "\n" + cluster);
  if (multidoc)
    out += GeneratedMultidocDocuments(node.spec, spec_.name, first_cp->address, node.tag);
  out += documents;
  out += ImageVerificationDocument(node.spec.image_verification);
  if (HasExtraDocuments(node)) out += kWorkerExtraDocuments;
  return out;
}

absl::StatusOr<ApplyResult> SimCluster::ApplyConfiguration(SimNode& node, const std::string& data,
                                                           int mode, bool dry_run,
                                                           std::chrono::milliseconds try_timeout) {
  std::lock_guard lock(mu_);
  auto parsed = ReadConfig(data);
  if (!parsed.ok()) return parsed.status();
  auto current = ReadConfig(node.machine_config);
  const bool needs_reboot = !current.ok() || current->reboot_fields != parsed->reboot_fields;
  auto version = core::ParseTalosVersion(node.tag);
  const bool v114 = version.ok() && version->Minor() >= core::MinorVersion{1, 14};
  ApplyResult result;
  result.mode = mode;
  if (v114 && mode == Mode::REBOOT) {
    // v1alpha1_server.go ApplyConfiguration (v1.14.0-rc.1), outside maintenance mode.
    return absl::UnimplementedError(
        "the REBOOT mode is not supported, please use AUTO or NO_REBOOT modes instead");
  }
  if (mode == Mode::AUTO) result.mode = (!v114 && needs_reboot) ? Mode::REBOOT : Mode::NO_REBOOT;
  if (!v114 && needs_reboot && (mode == Mode::NO_REBOOT || mode == Mode::TRY)) {
    return absl::InvalidArgumentError(
        "apply configuration without reboot is not supported: machine.install or machine.type "
        "changed");
  }
  const std::map<int, std::string> kDetails = {
      {Mode::REBOOT, "Applied configuration with a reboot"},
      {Mode::NO_REBOOT, "Applied configuration without a reboot"},
      {Mode::STAGED, "Staged configuration to be applied after a reboot"},
      {Mode::TRY, fmt::format("Applied configuration in a try mode without a reboot, will be "
                              "rolled back in {}s",
                              try_timeout.count() / 1000)}};
  result.details = kDetails.at(result.mode);
  if (dry_run) {
    result.details = "Dry run summary:\n" + result.details + " (dry run)";
    return result;
  }
  JournalStateLocked(
      node, "config",
      fmt::format("apply mode {}", Mode::Mode_Name(static_cast<Mode::Mode>(result.mode))));
  if (result.mode == Mode::STAGED) {
    node.staged_config = data;
    return result;
  }
  const std::string previous = node.machine_config;
  node.machine_config = data;
  ++node.config_version;
  for (const auto& [name, image] : parsed->images) {
    if (node.images[name] == image) continue;
    node.images[name] = image;
    JournalStateLocked(node, "image", fmt::format("{} = {}", name, image));
    if (name == "kubelet") RestartKubeletLocked(node, image);
  }
  RestartStaticPodsLocked(node);
  RefreshResourcesLocked(node);
  if (result.mode == Mode::REBOOT) {
    // Upstream runs the reboot sequence without a request: the default mode.
    StartRebootSequenceLocked(node, "", SimRebootMode::kDefault);
  } else if (result.mode == Mode::TRY) {
    AfterLocked(node, try_timeout, [this, previous](SimNode& n) {
      n.machine_config = previous;
      ++n.config_version;
      JournalStateLocked(n, "config", "try mode timeout: configuration rolled back");
      RefreshResourcesLocked(n);
    });
  }
  NotifyLocked();
  return result;
}

}  // namespace tr::sim
