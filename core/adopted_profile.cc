#include "core/adopted_profile.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/api_version.h"
#include "core/names.h"
#include "core/text.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

// "a (cp-0, cp-1); b (w-0)": each distinct value and the nodes that have it.
std::string Grouped(std::map<std::string, std::vector<std::string>> by_value) {
  std::vector<std::string> parts;
  for (auto& [value, nodes] : by_value) {
    std::sort(nodes.begin(), nodes.end());
    parts.push_back(fmt::format("{} ({})", value.empty() ? "unknown" : value,
                                fmt::join(nodes, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

// The one value every node has, or FailedPrecondition naming who has which.
absl::StatusOr<std::string> Agreed(const std::vector<AdoptedNode>& nodes, const char* what,
                                   const char* advice,
                                   std::string (*value)(const AdoptedNode&)) {
  std::map<std::string, std::vector<std::string>> by_value;
  for (const AdoptedNode& node : nodes) by_value[value(node)].push_back(node.name);
  if (by_value.size() == 1 && !by_value.begin()->first.empty()) return by_value.begin()->first;
  return absl::FailedPreconditionError(
      fmt::format("the nodes do not agree on {}: {}; {}", what, Grouped(by_value), advice));
}

std::string TalosOf(const AdoptedNode& node) {
  return node.seen.talos ? node.seen.talos->Tag().substr(1) : "";
}

std::string KubeletOf(const AdoptedNode& node) {
  return node.seen.kubelet ? node.seen.kubelet->ToString() : "";
}

std::string SchematicOf(const AdoptedNode& node) {
  if (!node.seen.extensions_observed) return "not read";
  return node.seen.schematic.value_or("none");
}

std::string ExtensionsOf(const AdoptedNode& node) {
  return fmt::format("{}", fmt::join(node.seen.extensions, ", "));
}

absl::Status CheckReachable(const std::vector<AdoptedNode>& nodes) {
  std::vector<std::string> silent;
  for (const AdoptedNode& node : nodes) {
    if (!node.seen.reachable || !node.seen.talos) silent.push_back(node.name);
  }
  if (silent.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(fmt::format(
      "no answer from the Talos API of {}: a profile is written only from nodes that answer",
      fmt::join(silent, ", ")));
}

// The endpoints the profile keeps: the context's on a control plane, else every control plane.
std::vector<std::string> Endpoints(const AdoptInput& input,
                                   const std::vector<const AdoptedNode*>& control_planes) {
  std::set<std::string> addresses;
  for (const AdoptedNode* node : control_planes) addresses.insert(node->address);
  std::vector<std::string> kept;
  for (const std::string& endpoint : input.endpoints) {
    absl::StatusOr<Endpoint> parsed = ParseEndpoint(endpoint);
    if (parsed.ok() && addresses.contains(parsed->host)) kept.push_back(endpoint);
  }
  if (!kept.empty()) return kept;
  for (const AdoptedNode* node : control_planes) kept.push_back(node->address);
  return kept;
}

// spec.talos.schematic, factory, platform (and secureboot) of a proven schematic of extensions.
std::string SchematicLines(const FactoryInstaller& installer) {
  std::string out = fmt::format(
      "    schematic:\n      customization:\n        systemExtensions:\n"
      "          officialExtensions: [{}]\n    factory: {}\n    platform: {}\n",
      fmt::join(installer.schematic.official_extensions, ", "), installer.factory,
      installer.platform);
  if (installer.secureboot) out += "    secureboot: true\n";
  return out;
}

}  // namespace

std::string InstallerRepository(std::string_view image) {
  if (const size_t at = image.find('@'); at != std::string_view::npos) image = image.substr(0, at);
  const size_t slash = image.rfind('/');
  const size_t colon = image.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    image = image.substr(0, colon);
  }
  return std::string(image);
}

std::string RunningInstallerRepository(const AdoptedNode& node) {
  std::string repository = InstallerRepository(node.install_image);
  if (repository.empty() || !node.seen.schematic) return repository;
  const size_t slash = repository.rfind('/');
  if (slash == std::string::npos) return repository;
  if (CheckSchematicId(std::string_view(repository).substr(slash + 1)).ok()) {
    repository = repository.substr(0, slash + 1) + *node.seen.schematic;
  }
  return repository;
}

std::optional<SchematicCandidate> FindSchematicCandidate(const std::vector<AdoptedNode>& nodes) {
  std::set<std::string> repositories, extension_sets;
  for (const AdoptedNode& node : nodes) {
    repositories.insert(RunningInstallerRepository(node));
    extension_sets.insert(ExtensionsOf(node));
  }
  if (nodes.empty() || repositories.size() != 1 || extension_sets.size() != 1 ||
      !nodes.front().seen.schematic) {
    return std::nullopt;
  }
  // "<host>/<platform>-installer[-secureboot]/<id>"
  const std::string& repository = *repositories.begin();
  const std::vector<std::string_view> parts = Split(repository, '/');
  if (parts.size() != 3 || parts[2] != *nodes.front().seen.schematic) return std::nullopt;
  SchematicCandidate candidate;
  candidate.id = std::string(parts[2]);
  std::string kind(parts[1]);
  candidate.installer.secureboot = kind.ends_with("-secureboot");
  if (candidate.installer.secureboot) kind.resize(kind.size() - std::string_view("-secureboot").size());
  if (!kind.ends_with("-installer") || kind == "-installer") return std::nullopt;
  candidate.installer.platform = kind.substr(0, kind.size() - std::string_view("-installer").size());
  candidate.installer.factory = "https://" + std::string(parts[0]);
  for (const std::string& extension : nodes.front().seen.extensions) {
    candidate.installer.schematic.official_extensions.push_back(
        "siderolabs/" + extension.substr(0, extension.find(' ')));
  }
  std::sort(candidate.installer.schematic.official_extensions.begin(),
            candidate.installer.schematic.official_extensions.end());
  return candidate;
}

absl::StatusOr<std::string> AdoptedProfileYaml(const AdoptInput& input) {
  if (absl::Status s = CheckReachable(input.nodes); !s.ok()) return s;
  std::vector<const AdoptedNode*> control_planes, workers;
  for (const AdoptedNode& node : input.nodes) {
    (node.role == NodeRole::kControlPlane ? control_planes : workers).push_back(&node);
  }
  if (control_planes.empty()) {
    return absl::FailedPreconditionError(
        "no node is labelled node-role.kubernetes.io/control-plane in Kubernetes");
  }
  auto by_name = [](const AdoptedNode* a, const AdoptedNode* b) { return a->name < b->name; };
  std::sort(control_planes.begin(), control_planes.end(), by_name);
  std::sort(workers.begin(), workers.end(), by_name);
  constexpr const char* kMidRollout =
      "a profile says one version per cluster: finish or roll back the upgrade first";
  absl::StatusOr<std::string> talos =
      Agreed(input.nodes, "the Talos version", kMidRollout, TalosOf);
  if (!talos.ok()) return talos.status();
  absl::StatusOr<std::string> kubernetes =
      Agreed(input.nodes, "the kubelet version", kMidRollout, KubeletOf);
  if (!kubernetes.ok()) return kubernetes.status();
  std::string image = input.image;
  if (image.empty()) {
    absl::StatusOr<std::string> running =
        Agreed(input.nodes, "the installer (machine.install.image, with the schematic booted)",
               "pass --image with the installer repository every node should run",
               RunningInstallerRepository);
    if (!running.ok()) return running.status();
    image = *running;
  }
  // What the image holds, as a comment: the profile's image is the whole of it.
  std::set<std::string> schematics, extension_sets;
  for (const AdoptedNode& node : input.nodes) {
    schematics.insert(SchematicOf(node));
    extension_sets.insert(ExtensionsOf(node));
  }

  std::string out = fmt::format(
      "# Written by `talos-reconciler adopt` from the nodes of talosconfig context {}: what\n"
      "# they run now. Commit it as clusters/{}.yaml; a change of a version is an upgrade.\n"
      "# spec.endpoints are dialled instead of the context's; node names are the Kubernetes\n"
      "# Node names (as --node-name and drains name them).\n",
      input.credentials, input.name);
  out += fmt::format("apiVersion: {}\nkind: ClusterProfile\nmetadata:\n  name: {}\nspec:\n",
                     kApiVersion, input.name);
  out += fmt::format("  endpoints: [{}]\n", fmt::join(Endpoints(input, control_planes), ", "));
  out += fmt::format("  credentials: {}\n  talos:\n    version: {}\n", input.credentials, *talos);
  if (input.schematic && input.image.empty()) {
    out += SchematicLines(*input.schematic);
  } else {
    out += fmt::format("    image: {}\n", image);
  }
  if (schematics.size() == 1 && *schematics.begin() != "none" &&
      *schematics.begin() != "not read") {
    out += fmt::format("    # every node booted Image Factory schematic {}\n", *schematics.begin());
  }
  if (extension_sets.size() == 1 && !extension_sets.begin()->empty()) {
    out += fmt::format("    # with the extensions {}\n", *extension_sets.begin());
  } else if (extension_sets.size() > 1) {
    out += "    # the nodes' extensions differ (per-node schematics are not written by adopt)\n";
  }
  out += fmt::format("  kubernetes:\n    version: {}\n  nodes:\n", *kubernetes);
  for (const auto* group : {&control_planes, &workers}) {
    for (const AdoptedNode* node : *group) {
      out += fmt::format("    - {{name: {}, address: {}, role: {}}}\n", node->name,
                         node->address, NodeRoleName(node->role));
    }
  }
  return out;
}

}  // namespace tr::core
