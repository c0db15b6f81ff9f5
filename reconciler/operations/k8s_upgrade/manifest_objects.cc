#include "reconciler/operations/k8s_upgrade/manifest_objects.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "absl/strings/str_replace.h"
#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

using nlohmann::json;

// Kinds without a namespace among those Talos renders or people add as extra manifests.
bool ClusterScopedKind(std::string_view kind) {
  static const std::set<std::string_view> kKinds = {"Namespace",
                                                    "ClusterRole",
                                                    "ClusterRoleBinding",
                                                    "CustomResourceDefinition",
                                                    "PriorityClass",
                                                    "StorageClass",
                                                    "RuntimeClass",
                                                    "IngressClass",
                                                    "APIService",
                                                    "ValidatingWebhookConfiguration",
                                                    "MutatingWebhookConfiguration",
                                                    "PersistentVolume"};
  return kKinds.contains(kind);
}

// The apply stage of a kind (go-kubernetes v0.2.41 kubernetes/ssa/apply.go: definitions first;
// talos_managed.go's CustomStageKinds: ConfigMap and Secret next).
int ApplyStage(std::string_view kind) {
  if (kind == "CustomResourceDefinition" || kind == "Namespace" || kind == "ClusterRole" ||
      kind.ends_with("Class")) {
    return 0;
  }
  return kind == "ConfigMap" || kind == "Secret" ? 1 : 2;
}

json ManifestYamlToJson(const YAML::Node& node) {
  if (node.IsMap()) {
    json out = json::object();
    for (const auto& e : node) out[e.first.as<std::string>("")] = ManifestYamlToJson(e.second);
    return out;
  }
  if (node.IsSequence()) {
    json out = json::array();
    for (const YAML::Node& item : node) out.push_back(ManifestYamlToJson(item));
    return out;
  }
  if (!node.IsScalar()) return nullptr;
  // Keep YAML's plain scalars typed, so an apply sends `replicas: 2`, not "2".
  if (node.Tag() == "?") {
    const std::string& s = node.Scalar();
    if (s == "true" || s == "false") return s == "true";
    if (s == "null" || s == "~") return nullptr;
    json number = json::parse(s, nullptr, false);
    if (number.is_number()) return number;
  }
  return node.Scalar();
}

std::vector<json> ManifestSpecObjects(const std::string& yaml_spec) {
  std::vector<json> out;
  try {
    YAML::Node spec = YAML::Load(yaml_spec);
    if (spec.IsMap() && spec["items"]) spec = spec["items"];
    if (!spec.IsSequence()) return out;
    for (const YAML::Node& item : spec) {
      // Talos may wrap each object as {object: {...}}.
      out.push_back(ManifestYamlToJson(item.IsMap() && item["object"] ? item["object"] : item));
    }
  } catch (const YAML::Exception&) {
  }
  return out;
}

std::string ManifestText(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string()
             ? object[key].get<std::string>()
             : "";
}

std::string KindPlural(std::string kind) {
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (kind.ends_with("y")) return kind.substr(0, kind.size() - 1) + "ies";
  if (kind.ends_with("s")) return kind == "endpoints" ? kind : kind + "es";
  return kind + "s";
}

std::string ObjectApiPath(const std::string& api_version, const std::string& kind,
                          const std::string& ns, const std::string& name) {
  return fmt::format("/{}/{}/{}{}/{}", api_version.find('/') == std::string::npos ? "api" : "apis",
                     api_version, ns.empty() ? "" : "namespaces/" + ns + "/", KindPlural(kind),
                     name);
}

std::string DescribeObject(const std::string& kind, const std::string& ns,
                           const std::string& name) {
  return fmt::format("{} {}{}", kind, ns.empty() ? "" : ns + "/", name);
}

}  // namespace

std::string ManifestObject::Group() const {
  const size_t slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

std::string ManifestObject::Path() const { return ObjectApiPath(api_version, kind, ns, name); }

std::string ManifestObject::Describe() const { return DescribeObject(kind, ns, name); }

std::string ManifestObject::InventoryKey() const {
  return fmt::format("{}_{}_{}_{}", ns, absl::StrReplaceAll(name, {{":", "__"}}), Group(), kind);
}

std::string InventoryRef::Describe() const { return DescribeObject(kind, ns, name); }

absl::StatusOr<std::vector<ManifestObject>> ManifestObjectsToApply(
    const std::vector<std::string>& yaml_specs) {
  std::vector<ManifestObject> out;
  for (const std::string& spec : yaml_specs) {
    for (json& object : ManifestSpecObjects(spec)) {
      ManifestObject o;
      o.object = std::move(object);
      o.api_version = ManifestText(o.object, "apiVersion");
      o.kind = ManifestText(o.object, "kind");
      json& meta = o.object["metadata"];
      if (!meta.is_object()) meta = json::object();
      if (ClusterScopedKind(o.kind)) meta.erase("namespace");
      o.ns = ManifestText(meta, "namespace");
      o.name = ManifestText(meta, "name");
      json& annotations = meta["annotations"];
      if (!annotations.is_object()) annotations = json::object();
      const std::string named = ManifestText(annotations, kInventoryAnnotation);
      if (!named.empty() && named != kInventoryName) {
        return absl::InvalidArgumentError(
            fmt::format("{} already has an inventory annotation ({}: {})", o.Describe(),
                        kInventoryAnnotation, named));
      }
      annotations[kInventoryAnnotation] = kInventoryName;
      out.push_back(std::move(o));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const ManifestObject& a, const ManifestObject& b) {
    return ApplyStage(a.kind) < ApplyStage(b.kind);
  });
  return out;
}

bool Covers(const json& live, const json& want) {
  if (want.is_object()) {
    if (!live.is_object()) return false;
    for (const auto& [key, value] : want.items()) {
      if (!live.contains(key) || !Covers(live.at(key), value)) return false;
    }
    return true;
  }
  if (want.is_array()) {
    if (!live.is_array() || live.size() != want.size()) return false;
    for (size_t i = 0; i < want.size(); ++i) {
      if (!Covers(live.at(i), want.at(i))) return false;
    }
    return true;
  }
  // Scalars compare as text: the API may answer "2" where the manifest says 2, or back.
  auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  return text(live) == text(want);
}

bool AppliedByTalos(const json& live) {
  const json* managed = &live;
  for (const char* key : {"metadata", "managedFields"}) {
    if (!managed->is_object() || !managed->contains(key)) return false;
    managed = &(*managed)[key];
  }
  if (!managed->is_array()) return false;
  return std::any_of(managed->begin(), managed->end(), [](const json& entry) {
    return ManifestText(entry, "manager") == kTalosFieldManager &&
           ManifestText(entry, "operation") == "Apply";
  });
}

std::string ForeignInventory(const json& live) {
  if (!live.is_object() || !live.contains("metadata")) return "";
  const json& meta = live["metadata"];
  if (!meta.is_object() || !meta.contains("annotations")) return "";
  const std::string named = ManifestText(meta["annotations"], kInventoryAnnotation);
  return named == kInventoryName ? "" : named;
}

// Namespace up to the first '_', kind after the last, group before it; the name is the rest
// (a group or a kind has no '_', a name's "__" is a ':'), as cli-utils parses it.
std::optional<InventoryRef> ParseInventoryKey(std::string_view key) {
  const size_t first = key.find('_');
  const size_t last = key.rfind('_');
  if (first == std::string_view::npos || last <= first) return std::nullopt;
  const std::string_view middle = key.substr(first + 1, last - first - 1);
  const size_t group_at = middle.rfind('_');
  if (group_at == std::string_view::npos || group_at == 0 || last + 1 == key.size()) {
    return std::nullopt;
  }
  return InventoryRef{std::string(key.substr(0, first)),
                      absl::StrReplaceAll(std::string(middle.substr(0, group_at)), {{"__", ":"}}),
                      std::string(middle.substr(group_at + 1)), std::string(key.substr(last + 1))};
}

std::optional<std::string> InventoryRefPath(const InventoryRef& ref,
                                            const std::vector<ManifestObject>& objects) {
  for (const ManifestObject& o : objects) {
    if (o.kind == ref.kind && o.Group() == ref.group) {
      return ObjectApiPath(o.api_version, ref.kind, ref.ns, ref.name);
    }
  }
  // The groups of the kinds Talos renders (talos v1.14.0-rc.1 internal/app/machined/pkg/
  // controllers/k8s/internal/k8stemplates), at the version it writes them.
  static const std::map<std::string_view, std::string_view> kVersions = {
      {"", "v1"},
      {"apps", "apps/v1"},
      {"rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1"},
      {"apiextensions.k8s.io", "apiextensions.k8s.io/v1"},
      {"policy", "policy/v1"},
      {"scheduling.k8s.io", "scheduling.k8s.io/v1"},
      {"storage.k8s.io", "storage.k8s.io/v1"}};
  auto it = kVersions.find(ref.group);
  if (it == kVersions.end()) return std::nullopt;
  return ObjectApiPath(std::string(it->second), ref.kind, ref.ns, ref.name);
}

std::set<std::string> InventoryKeys(const json& configmap) {
  std::set<std::string> keys;
  if (!configmap.is_object() || !configmap.contains("data")) return keys;
  const json& data = configmap["data"];
  if (!data.is_object()) return keys;
  for (const auto& [key, value] : data.items()) keys.insert(key);
  return keys;
}

}  // namespace tr::reconciler::k8s_upgrade
