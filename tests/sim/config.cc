// Machine configuration of a simulated node: a rendered v1alpha1 document, ApplyConfiguration
// with its modes by version (facts §3.4), and the images the configuration selects.
#include "core/version.h"
#include "fmt/format.h"
#include "machine/machine.pb.h"
#include "tests/sim/sim_cluster.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

using Mode = machine::ApplyConfigurationRequest;

YAML::Node Child(const YAML::Node& n, const char* key) {
  if (n && n.IsMap() && n[key]) return n[key];
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string InstallerImage(const NodeSpec& spec, const std::string& tag) {
  return InitialInstallerImage(spec.platform, spec.schematic, tag);
}

struct ParsedConfig {
  std::map<std::string, std::string> images;
  std::string reboot_fields;  // YAML of machine.type + machine.install: a change needs a reboot
};

absl::StatusOr<ParsedConfig> ParseConfig(const std::string& data) {
  try {
    ParsedConfig parsed;
    for (const YAML::Node& doc : YAML::LoadAll(data)) {
      if (!doc.IsMap() || doc["version"].as<std::string>("") != "v1alpha1") continue;
      const YAML::Node machine = Child(doc, "machine");
      if (!machine.IsMap()) {
        return absl::InvalidArgumentError(
            "1 error occurred:\n\t* machine instructions are required");
      }
      YAML::Emitter out;
      out << Child(machine, "type") << Child(machine, "install");
      parsed.reboot_fields = out.c_str();
      const YAML::Node cluster = Child(doc, "cluster");
      const std::pair<std::string, YAML::Node> images[] = {
          {"kubelet", Child(Child(machine, "kubelet"), "image")},
          {"kube-apiserver", Child(Child(cluster, "apiServer"), "image")},
          {"kube-controller-manager", Child(Child(cluster, "controllerManager"), "image")},
          {"kube-scheduler", Child(Child(cluster, "scheduler"), "image")},
          {"kube-proxy", Child(Child(cluster, "proxy"), "image")}};
      for (const auto& [name, node] : images) {
        if (node && node.IsScalar()) parsed.images[name] = node.as<std::string>();
      }
      return parsed;
    }
    return absl::InvalidArgumentError("failed to parse config: no v1alpha1 document found");
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("failed to parse config: {}", e.what()));
  }
}

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
  std::string out = fmt::format(
      "version: v1alpha1\ndebug: false\npersist: true\nmachine:\n  type: {}\n  install:\n"
      "    disk: /dev/sda\n    image: {}\n  kubelet:\n    image: {}\n  network:\n"
      "    hostname: {}\ncluster:\n  clusterName: {}\n  controlPlane:\n"
      "    endpoint: https://{}:6443\n  proxy:\n    image: {}\n",
      NodeRoleName(node.spec.role), InstallerImage(node.spec, node.tag), image("kubelet"),
      node.spec.name, spec_.name, first_cp->address, image("kube-proxy"));
  if (node.is_control_plane()) {
    out += fmt::format(
        "  apiServer:\n    image: {}\n  controllerManager:\n    image: {}\n  scheduler:\n"
        "    image: {}\n",
        image("kube-apiserver"), image("kube-controller-manager"), image("kube-scheduler"));
  }
  if (HasExtraDocuments(node)) out += kWorkerExtraDocuments;
  return out;
}

absl::StatusOr<ApplyResult> SimCluster::ApplyConfiguration(SimNode& node, const std::string& data,
                                                           int mode, bool dry_run,
                                                           std::chrono::milliseconds try_timeout) {
  std::lock_guard lock(mu_);
  auto parsed = ParseConfig(data);
  if (!parsed.ok()) return parsed.status();
  auto current = ParseConfig(node.machine_config);
  const bool needs_reboot = !current.ok() || current->reboot_fields != parsed->reboot_fields;
  auto version = core::ParseTalosVersion(node.tag);
  const bool v114 = version.ok() && version->Minor() >= core::MinorVersion{1, 14};
  ApplyResult result;
  result.mode = mode;
  if (v114 && mode == Mode::REBOOT) {
    return absl::UnimplementedError("apply configuration in REBOOT mode is not supported");
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
