// The bootstrap manifests as Talos applies them to Kubernetes (talos v1.14.0-rc.1
// pkg/cluster/kubernetes/talos_managed.go syncManifestsSSA; go-kubernetes v0.2.41 kubernetes/ssa;
// machined's internal/app/machined/pkg/controllers/k8s/manifest_apply.go): the objects of the
// Manifest resources, in the order they are applied, each carrying the inventory annotation;
// the inventory ConfigMap's keys; and what a live object says about who applied it.
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tr::reconciler::k8s_upgrade {

// Talos's names (talos v1.14.0-rc.1 pkg/machinery/constants/constants.go; the annotation:
// go-kubernetes v0.2.41 kubernetes/ssa/inventory.go).
inline constexpr char kTalosFieldManager[] = "talos";
inline constexpr char kInventoryNamespace[] = "kube-system";
inline constexpr char kInventoryName[] = "talos-bootstrap-manifests-inventory";
inline constexpr char kInventoryAnnotation[] = "config.k8s.io/owning-inventory";

// One object of the manifests.
struct ManifestObject {
  nlohmann::json object;  // as rendered, plus the inventory annotation
  std::string api_version, kind, ns, name;

  std::string Group() const;     // "" for the core group
  std::string Path() const;      // its API path, e.g. /apis/apps/v1/namespaces/kube-system/...
  std::string Describe() const;  // "DaemonSet kube-system/kube-proxy"
  // Its key in the inventory: "<namespace>_<name>_<group>_<kind>", a ':' of the name written
  // "__" (the cli-utils ObjMetadata form go-kubernetes keeps in the ConfigMap's data).
  std::string InventoryKey() const;
};

// The objects of Manifest resource specs (YAML: a list of objects, or a map with `items`; each
// possibly wrapped as {object: ...}), in apply order: CustomResourceDefinitions, Namespaces,
// ClusterRoles and *Class kinds first, then ConfigMaps and Secrets, then the rest (each group in
// manifest order), as talosctl stages them. A cluster-scoped kind loses a namespace set by
// mistake. InvalidArgument for an object that names another inventory in its annotation.
absl::StatusOr<std::vector<ManifestObject>> ManifestObjectsToApply(
    const std::vector<std::string>& yaml_specs);

// Whether `live` already has every field `want` sets, with the same value.
bool Covers(const nlohmann::json& live, const nlohmann::json& want);

// Whether `live`'s managedFields hold a server-side apply by Talos's field manager.
bool AppliedByTalos(const nlohmann::json& live);

// The inventory `live` says it belongs to when that is not Talos's; "" otherwise.
std::string ForeignInventory(const nlohmann::json& live);

// An object named by an inventory key.
struct InventoryRef {
  std::string ns, name, group, kind;
  std::string Describe() const;  // "DaemonSet kube-system/kube-proxy"
};

// nullopt for a key that is not of the form above.
std::optional<InventoryRef> ParseInventoryKey(std::string_view key);

// The API path of `ref`: its version taken from an object of the same kind in `objects`, else
// from the kinds Talos renders; nullopt for a kind known by neither.
std::optional<std::string> InventoryRefPath(const InventoryRef& ref,
                                            const std::vector<ManifestObject>& objects);

// The keys of an inventory ConfigMap (its data's keys).
std::set<std::string> InventoryKeys(const nlohmann::json& configmap);

}  // namespace tr::reconciler::k8s_upgrade
