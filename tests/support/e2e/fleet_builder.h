// Fleet files for talos-sim and the matching profile repository for the reconciler, written
// from one description so the two agree on cluster names, node names, roles and versions. Node
// addresses are left to the simulator (its own loopback /24) and read back from its ready.json
// when the profiles are written.
//
// Values and pure functions; thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "tests/support/e2e/sim_process.h"

namespace tr::e2e {

// The fleet time scale of the tests: the simulator's default timings (30 s of fleet time for a
// legacy upgrade: pull 4 s, drain 2 s, install 8 s, reboot 10 s, boot 6 s) become 300 ms.
inline constexpr double kTestTimeScale = 0.01;

inline constexpr const char* kInstallerImage =
    "factory.talos.dev/metal-installer/"
    "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";

struct NodeDef {
  std::string name;  // unique in the fleet
  bool control_plane = false;
  std::string talos;  // "1.11.6"
  std::string kubernetes = "1.34.1";
  std::string faults;   // a YAML flow list, "[{kind: boot_failure, count: 1}]"; empty: none
  std::string address;  // "127.a.b.c"; empty: allocated from the fleet's own /24
  // talos-sim's `config:` ("generated", "v1alpha1", "migrated", "partly_migrated"); empty: as
  // `talosctl gen config` of the node's version writes it.
  std::string config;
  std::string labels;  // its Kubernetes Node's extra labels, a YAML flow mapping; empty: none
};

struct ClusterDef {
  std::string name;
  std::vector<NodeDef> nodes;
  std::string extra;  // more of the cluster's fleet entry (pods:, pdbs:), indented by 4 spaces
};

// A cluster of `control_planes` + `workers` nodes named <name>-cp-<i> and <name>-w-<i>, all on
// `talos` and `kubernetes`.
ClusterDef MakeCluster(const std::string& name, int control_planes, int workers,
                       const std::string& talos, const std::string& kubernetes = "1.34.1");

struct FleetOptions {
  double time_scale = kTestTimeScale;
  bool refuse_connections_while_down = false;
  std::string timings = {};  // a YAML flow mapping, "{apid_hang: 300s}"; empty: the defaults
};

// A talos-sim fleet file with "address_prefix: auto".
std::string FleetYaml(const std::vector<ClusterDef>& clusters, const FleetOptions& options = {});

struct ProfileDef {
  std::string talos;
  std::string kubernetes = "1.34.1";
  std::string image = kInstallerImage;
  // When set, spec.talos.schematic as a YAML flow mapping instead of `image`.
  std::string schematic;
  std::vector<std::string> policy;  // lines under spec.policy, e.g. "nodeTimeout: 3s"
  // spec.nodes[].schematic by node name, each a YAML flow mapping (beside `schematic`).
  std::map<std::string, std::string> node_schematics{};
  // More lines under spec, e.g. "promotion: {after: [lab]}".
  std::vector<std::string> spec_lines{};
  // spec.talos.installerStore when set ("inmem", "system").
  std::string installer_store{};
};

// A profile asking for Talos `talos` (and Kubernetes `kubernetes`) with these policy lines.
ProfileDef AtTalos(std::string talos, std::vector<std::string> policy = {},
                   std::string kubernetes = "1.34.1");

// clusters/<name>.yaml for a cluster the simulator runs: its nodes and addresses, endpoints =
// its control planes, credentials = its name (the simulator's <state-dir>/<name>/talosconfig).
std::string ProfileYaml(const SimClusterInfo& cluster, const ProfileDef& profile);

// The repository defaults of the tests: no settle time, a node timeout (1 minute unless given),
// and `extra` lines under policy.
std::string RepositoryDefaultsYaml(const std::string& node_timeout = "1m",
                                   const std::vector<std::string>& extra_policy = {});

// A profile's policy line for a 30-minute window in UTC that opens at `opens` (a whole minute):
// "windows: [{days: [Tue], start: \"14:03\", duration: 30m, timezone: UTC}]".
std::string WindowPolicyLine(std::chrono::system_clock::time_point opens);

// The profile file's path in the repository: "clusters/<name>.yaml".
std::string ProfilePath(const std::string& cluster);

}  // namespace tr::e2e
