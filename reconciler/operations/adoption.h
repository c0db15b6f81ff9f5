// What `adopt` observes of a running cluster it knows only by a talosconfig context: the
// control planes from etcd's member list, every node from the Kubernetes API (the admin
// kubeconfig the control planes hand out), then each node as the daemon observes it (Talos
// version, schematic and extensions, kubelet) and the installer its machine configuration
// names. core/adopted_profile.h writes the profile from it.
//
// Thread-compatible; blocks on the network.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/adopted_profile.h"
#include "core/profile.h"
#include "reconciler/clients/cluster_clients.h"

namespace tr::reconciler {

// `seed` names the cluster, its credentials (the context) and the endpoints to dial, and has
// no nodes. `ask_first` are the nodes to ask for etcd's member list, in order (the context's
// default nodes, then the endpoints' hosts). FailedPrecondition saying what did not answer
// when no control plane lists etcd's members or the Kubernetes API cannot be reached; the
// factory's errors for unusable credentials.
absl::StatusOr<std::vector<core::AdoptedNode>> ObserveForAdoption(
    ClusterClientFactory& clients, const core::ClusterProfile& seed,
    const std::vector<std::string>& ask_first);

// The Image Factory schematic every node booted, when the official extensions they run make
// exactly that schematic (its ID is the sha256 of its YAML: core/schematic.h): the profile can
// then declare the schematic rather than name its installer. nullopt when they run no factory
// installer, no extension, or a schematic with more than extensions (kernel arguments, META,
// an overlay), which the nodes do not report.
std::optional<core::FactoryInstaller> ProvenSchematic(const std::vector<core::AdoptedNode>& nodes);

// The host of an etcd peer URL ("https://10.0.0.11:2380", "https://[fd00::1]:2380").
std::string PeerUrlHost(const std::string& url);

}  // namespace tr::reconciler
