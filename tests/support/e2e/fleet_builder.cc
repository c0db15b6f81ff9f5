#include "tests/support/e2e/fleet_builder.h"

#include <time.h>

#include "fmt/format.h"

namespace tr::e2e {

ClusterDef MakeCluster(const std::string& name, int control_planes, int workers,
                       const std::string& talos, const std::string& kubernetes) {
  ClusterDef cluster{.name = name, .nodes = {}, .extra = {}};
  for (int i = 0; i < control_planes; ++i) {
    cluster.nodes.push_back({.name = fmt::format("{}-cp-{}", name, i),
                             .control_plane = true,
                             .talos = talos,
                             .kubernetes = kubernetes,
                             .faults = {},
                             .address = {},
                             .config = {},
                             .labels = {}});
  }
  for (int i = 0; i < workers; ++i) {
    cluster.nodes.push_back({.name = fmt::format("{}-w-{}", name, i),
                             .control_plane = false,
                             .talos = talos,
                             .kubernetes = kubernetes,
                             .faults = {},
                             .address = {},
                             .config = {},
                             .labels = {}});
  }
  return cluster;
}

ProfileDef AtTalos(std::string talos, std::vector<std::string> policy, std::string kubernetes) {
  return {.talos = std::move(talos),
          .kubernetes = std::move(kubernetes),
          .image = kInstallerImage,
          .schematic = {},
          .policy = std::move(policy),
          .node_schematics = {}};
}

std::string FleetYaml(const std::vector<ClusterDef>& clusters, const FleetOptions& options) {
  std::string yaml = fmt::format("time_scale: {}\naddress_prefix: auto\n", options.time_scale);
  if (options.refuse_connections_while_down) yaml += "refuse_connections_while_down: true\n";
  if (!options.timings.empty()) yaml += "timings: " + options.timings + "\n";
  yaml += "clusters:\n";
  for (const auto& cluster : clusters) {
    yaml += fmt::format("  - name: {}\n    nodes:\n", cluster.name);
    for (const auto& node : cluster.nodes) {
      yaml +=
          fmt::format("      - {{name: {}, role: {}, talos: v{}, kubernetes: {}", node.name,
                      node.control_plane ? "controlplane" : "worker", node.talos, node.kubernetes);
      if (!node.faults.empty()) yaml += ", faults: " + node.faults;
      if (!node.address.empty()) yaml += ", address: " + node.address;
      if (!node.config.empty()) yaml += ", config: " + node.config;
      if (!node.labels.empty()) yaml += ", labels: " + node.labels;
      yaml += "}\n";
    }
    yaml += cluster.extra;
  }
  return yaml;
}

std::string ProfileYaml(const SimClusterInfo& cluster, const ProfileDef& profile) {
  std::string endpoints;
  for (const auto& address : cluster.ControlPlaneAddresses()) {
    endpoints += (endpoints.empty() ? "" : ", ") + address;
  }
  std::string yaml = fmt::format(
      "apiVersion: talos-reconciler.dev/v1alpha1\n"
      "kind: ClusterProfile\n"
      "metadata:\n"
      "  name: {0}\n"
      "spec:\n"
      "  endpoints: [{1}]\n"
      "  credentials: {0}\n"
      "  talos:\n"
      "    version: {2}\n"
      "    {3}\n"
      "{5}"
      "  kubernetes:\n"
      "    version: {4}\n"
      "  nodes:\n",
      cluster.name, endpoints, profile.talos,
      profile.schematic.empty() ? "image: " + profile.image : "schematic: " + profile.schematic,
      profile.kubernetes,
      profile.installer_store.empty() ? ""
                                      : "    installerStore: " + profile.installer_store + "\n");
  for (const auto& node : cluster.nodes) {
    auto own = profile.node_schematics.find(node.name);
    const std::string schematic =
        own == profile.node_schematics.end() ? "" : ", schematic: " + own->second;
    yaml += fmt::format("    - {{name: {}, address: {}, role: {}{}}}\n", node.name, node.address,
                        node.role, schematic);
  }
  if (!profile.policy.empty()) {
    yaml += "  policy:\n";
    for (const auto& line : profile.policy) yaml += "    " + line + "\n";
  }
  for (const auto& line : profile.spec_lines) yaml += "  " + line + "\n";
  return yaml;
}

std::string RepositoryDefaultsYaml(const std::string& node_timeout,
                                   const std::vector<std::string>& extra_policy) {
  std::string yaml = fmt::format(
      "apiVersion: talos-reconciler.dev/v1alpha1\n"
      "kind: RepositoryDefaults\n"
      "policy:\n"
      "  settle: 0s\n"
      "  nodeTimeout: {}\n",
      node_timeout);
  for (const auto& line : extra_policy) yaml += "  " + line + "\n";
  return yaml;
}

std::string WindowPolicyLine(std::chrono::system_clock::time_point opens) {
  const time_t t = std::chrono::system_clock::to_time_t(opens);
  tm utc{};
  gmtime_r(&t, &utc);
  static constexpr const char* kWeekdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  return fmt::format(
      "windows: [{{days: [{}], start: \"{:02}:{:02}\", duration: 30m, timezone: UTC}}]",
      kWeekdays[utc.tm_wday], utc.tm_hour, utc.tm_min);
}

std::string ProfilePath(const std::string& cluster) {
  return fmt::format("clusters/{}.yaml", cluster);
}

}  // namespace tr::e2e
