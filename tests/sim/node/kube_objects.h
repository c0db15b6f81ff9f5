// How fleet-file Kubernetes objects are named and rendered where more than one file needs it
// (kube_model.cc renders pods, kube_objects.cc their controllers, budgets and storage).
// Pure functions.
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "tests/sim/catalog/fleet_spec.h"

namespace tr::sim {

struct KubePod;

// Whether the budget selects the pod: its namespace, and every label of a non-empty selector (an
// empty selector selects nothing, in eviction.go and the disruption controller alike).
bool PdbSelects(const PdbSpec& pdb, const KubePod& pod);

// The name of a fleet-file pod's controller object: a ReplicaSet is "<owner_name>-<10 hex>"
// (stable per namespace and owner, as a Deployment's pod-template-hash), a StatefulSet or
// DaemonSet is "<owner_name>".
std::string OwnerObjectName(const std::string& kind, const std::string& ns,
                            const std::string& owner_name);

// {"k": "v", ...} of labels or matchLabels.
nlohmann::json LabelsJson(const KubeLabels& labels);

// Adds what the fleet file says of a pod to its spec: nodeSelector, required pod anti-affinity,
// topologySpreadConstraints and volumes, as the API server returns them.
void FleetPodSpecJson(const PodSpec& pod, nlohmann::json& spec);

}  // namespace tr::sim
