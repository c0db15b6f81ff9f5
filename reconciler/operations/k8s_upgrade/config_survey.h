// Where the nodes of a cluster keep their Kubernetes settings, read for a plan that upgrades
// Kubernetes (`plan`, the pull-request comment): each node's shape ("v1alpha1", "documents",
// "mixed (…)", machine_config.h ConfigShape) and, when a component cannot be patched there,
// why — the reason the Kubernetes upgrade's pre-check would refuse, known at review time.
//
// Reads each reachable node's MachineConfig (COSI Get, as the upgrade does); the
// configuration holds secrets and nothing here quotes it. Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/observed.h"
#include "core/plan_render.h"
#include "core/profile.h"
#include "reconciler/clients/talos/talos_client.h"

namespace tr::reconciler::k8s_upgrade {

// The MachineConfig the node at `address` runs, as YAML (every document of it).
absl::StatusOr<std::string> ReadMachineConfig(talos::TalosClient& talos, const std::string& address,
                                              const std::string& node_name);

// One entry per node of `profile` that `observed` saw reachable, in profile order. A node whose
// configuration could not be read says so in `problem`.
std::vector<core::NodeKubernetesConfig> SurveyKubernetesConfig(
    talos::TalosClient& talos, const core::ClusterProfile& profile,
    const core::ObservedCluster& observed);

}  // namespace tr::reconciler::k8s_upgrade
