// Static documents of the fake Kubernetes API: discovery (/api, /apis, resource lists) and the
// meta.k8s.io/v1 Table form of node and pod lists that kubectl asks for. Pure functions.
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {

nlohmann::json ApiVersions();
nlohmann::json ApiGroups();
nlohmann::json CoreResources();
// "policy" or "coordination.k8s.io".
nlohmann::json GroupResources(const std::string& group);

// Tables over Node / Pod objects (their JSON as served), with ages relative to `now`.
nlohmann::json NodeTable(const nlohmann::json& nodes, WallTime now, uint64_t resource_version);
nlohmann::json PodTable(const nlohmann::json& pods, WallTime now, uint64_t resource_version);

// Whether `obj` (its JSON as served) matches a labelSelector ("a=b,c!=d,e") and a fieldSelector
// ("spec.nodeName=x", "metadata.name=x", "metadata.namespace=x"); empty selectors match all.
bool MatchesSelectors(const nlohmann::json& obj, const std::string& label_selector,
                      const std::string& field_selector);

}  // namespace tr::sim
