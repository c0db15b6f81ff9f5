// `adopt`: the profile that describes what a running cluster runs now, written from what its
// nodes answered (Talos and Kubernetes), so that `validate` accepts it and `plan` finds nothing
// to do. The observing is the caller's (reconciler/app/adopt_command.h); this part only checks
// that the nodes agree and writes the YAML.
//
// Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/observed.h"
#include "core/profile.h"
#include "core/schematic.h"

namespace tr::core {

// One node as adopt found it.
struct AdoptedNode {
  std::string name;     // the Kubernetes Node's name (what --node-name and drains use)
  std::string address;  // its InternalIP: where the Talos API reaches it
  NodeRole role = NodeRole::kWorker;
  NodeObservation seen;  // Talos version, kubelet version, schematic and extensions
  // machine.install.image of its machine configuration, as written (tag and all); "" when it
  // could not be read.
  std::string install_image;
};

struct AdoptInput {
  std::string name;         // metadata.name
  std::string credentials;  // spec.credentials: the talosconfig context
  // The talosconfig context's endpoints ("host" or "host:port"): those on a control plane are
  // kept, in their order; when none is, every control plane's address.
  std::vector<std::string> endpoints;
  std::vector<AdoptedNode> nodes;
  std::string image;  // --image: the installer repository to write instead of the nodes' own
  // The Image Factory schematic to write instead of the installer repository: set by the
  // caller only once it has checked that the schematic's ID is the one every node booted
  // (SchematicCandidate). Ignored with `image`.
  std::optional<FactoryInstaller> schematic{};
};

// What the nodes' installer says of an Image Factory schematic, to be proven by its ID: the
// factory (https://<the installer's registry host>), platform and SecureBoot of an installer
// "<host>/<platform>-installer[-secureboot]/<id>" every node runs, and a schematic of the
// official extensions every node runs ("siderolabs/<name>": the nodes report names only).
// nullopt when the nodes run no factory installer or do not agree. The nodes do not report
// kernel arguments, META or an overlay, so only sha256(SchematicYaml(...)) == `id` shows that
// the candidate is the whole schematic.
struct SchematicCandidate {
  FactoryInstaller installer;
  std::string id;
};
std::optional<SchematicCandidate> FindSchematicCandidate(const std::vector<AdoptedNode>& nodes);

// The installer repository of `image` ("ghcr.io/siderolabs/installer:v1.11.6" or one pinned by
// digest): the reference without its tag and digest.
std::string InstallerRepository(std::string_view image);

// The installer repository a node runs: its install.image's repository, with the last path
// part replaced by the schematic the node booted when that part is a schematic ID and the
// node runs another (an Image Factory installer upgraded since the configuration was
// written). "" when there is no install image.
std::string RunningInstallerRepository(const AdoptedNode& node);

// The ClusterProfile YAML of `input`, nodes control planes first, each group by name.
// FailedPrecondition naming the nodes when a node is unreachable or without a kubelet version,
// when they run different Talos or Kubernetes versions or different installers (mid-rollout:
// finish or roll back first, or pass --image), or when there is no control plane.
absl::StatusOr<std::string> AdoptedProfileYaml(const AdoptInput& input);

}  // namespace tr::core
