// Decoders of what the drain forecast reads from the Kubernetes API (pods, budgets, nodes,
// claims, volumes, storage classes) into core/disruption_types.h. As kube_json.h: a field of
// another type decodes to what is there and never throws.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/disruption_types.h"
#include "nlohmann/json.hpp"

namespace tr::reconciler::kube {

// Where claimed volumes bind pods: "<namespace>/<claim>" → the node the claim's volume is
// pinned to (a PersistentVolume whose required node affinity names one hostname), or
// kOnItsNode when the volume's storage class is known to keep data on one node without saying
// which (the pod's own node then).
inline constexpr const char* kOnItsNode = "*";
using ClaimNodes = std::map<std::string, std::string>;

// The node a PersistentVolume is pinned to; empty when none.
std::string PinnedNode(const nlohmann::json& volume);
// Whether a StorageClass's provisioner keeps each volume on one node (local-path, local
// static provisioners, OpenEBS local, TopoLVM).
bool BindsToOneNode(const nlohmann::json& storage_class);
// Adds the names of the list's storage classes that bind to one node.
void AddLocalClasses(const nlohmann::json& class_list, std::vector<std::string>& into);
// Adds the list's volumes pinned to a node: name → node.
void AddPinnedVolumes(const nlohmann::json& volume_list, std::map<std::string, std::string>& into);
// Adds the list's claims that bind to a node, given the pinned volumes (name → node) and the
// storage classes that bind to one node.
void AddClaims(const nlohmann::json& claim_list, const std::map<std::string, std::string>& pinned,
               const std::vector<std::string>& local_classes, ClaimNodes& into);

void AddPods(const nlohmann::json& pod_list, const ClaimNodes& claims,
             std::vector<core::WorkloadPod>& into);
// A budget without a selector (it matches no pod) is left out; matchExpressions are not read,
// so a budget that has them is taken to select more pods than it does.
void AddBudgets(const nlohmann::json& budget_list, std::vector<core::DisruptionBudget>& into);
void AddNodes(const nlohmann::json& node_list, std::vector<core::WorkloadNode>& into);

}  // namespace tr::reconciler::kube
