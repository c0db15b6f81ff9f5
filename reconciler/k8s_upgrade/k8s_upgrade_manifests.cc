// The last step of KubernetesUpgrade: the bootstrap manifests. Talos renders them from the
// machine configuration (Manifests resources in the controlplane namespace: kube-proxy, CoreDNS,
// RBAC, ...) but creates only what is missing, so after the kube-proxy image changed the
// kube-proxy DaemonSet in the cluster still runs the old one. Like `talosctl upgrade-k8s`, the
// step reads the manifests from the first control plane and applies each object to the
// Kubernetes API (server-side apply); an object whose live state already has every field the
// manifest sets is left alone, so a second run applies nothing.
#include <algorithm>
#include <cctype>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "reconciler/k8s_upgrade/k8s_upgrade.h"
#include "yaml-cpp/yaml.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

using nlohmann::json;

constexpr const char* kManifests = "manifests";
constexpr const char* kFieldManager = "talos-reconciler";

// The objects of a Manifest resource's spec: a list of objects, or a map with `items`.
std::vector<YAML::Node> ManifestObjects(const std::string& yaml_spec) {
  std::vector<YAML::Node> out;
  try {
    YAML::Node spec = YAML::Load(yaml_spec);
    if (spec.IsMap() && spec["items"]) spec = spec["items"];
    if (!spec.IsSequence()) return out;
    for (const YAML::Node& item : spec) {
      // Talos may wrap each object as {object: {...}}.
      out.push_back(item.IsMap() && item["object"] ? item["object"] : item);
    }
  } catch (const YAML::Exception&) {
  }
  return out;
}

std::string Field(const YAML::Node& object, const char* key) {
  return object.IsMap() && object[key] && object[key].IsScalar() ? object[key].as<std::string>()
                                                                 : "";
}

// The API path of an object: /api/v1/... for the core group, /apis/<group>/<version>/...
// otherwise; the resource is the kind's lower-case plural.
std::string ObjectPath(const YAML::Node& object) {
  const std::string api_version = Field(object, "apiVersion");
  std::string plural = Field(object, "kind");
  std::transform(plural.begin(), plural.end(), plural.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (plural.ends_with("y")) {
    plural.back() = 'i';
    plural += "es";
  } else if (plural.ends_with("s")) {
    plural += plural == "endpoints" ? "" : "es";
  } else {
    plural += "s";
  }
  const YAML::Node meta = object.IsMap() && object["metadata"] ? object["metadata"] : YAML::Node();
  const std::string ns = Field(meta, "namespace");
  return fmt::format("/{}/{}/{}{}/{}", api_version.find('/') == std::string::npos ? "api" : "apis",
                     api_version, ns.empty() ? "" : "namespaces/" + ns + "/", plural,
                     Field(meta, "name"));
}

// Whether `live` already has every field `want` sets, with the same value.
bool Covers(const json& live, const YAML::Node& want) {
  if (want.IsMap()) {
    if (!live.is_object()) return false;
    for (const auto& entry : want) {
      const std::string key = entry.first.as<std::string>("");
      if (!live.contains(key) || !Covers(live.at(key), entry.second)) return false;
    }
    return true;
  }
  if (want.IsSequence()) {
    if (!live.is_array() || live.size() != want.size()) return false;
    for (size_t i = 0; i < want.size(); ++i) {
      if (!Covers(live.at(i), want[i])) return false;
    }
    return true;
  }
  if (want.IsScalar()) {
    return (live.is_string() ? live.get<std::string>() : live.dump()) == want.Scalar();
  }
  return live.is_null();
}

}  // namespace

KubernetesUpgrade::Step KubernetesUpgrade::SyncManifests(std::stop_token stop,
                                                         UpgradeOutcome& outcome) {
  const UpgradeNode& first = options_.nodes.front();  // a control plane (PreChecks)
  auto resources = talos_.CosiList(first.address, "controlplane", "Manifests.kubernetes.talos.dev");
  if (!resources.ok()) return Failure{resources.status(), kManifests, first.name};
  std::vector<YAML::Node> objects;
  for (const talos::CosiResource& r : *resources) {
    for (YAML::Node& o : ManifestObjects(r.yaml_spec)) objects.push_back(std::move(o));
  }
  const int total = static_cast<int>(objects.size());
  for (int i = 0; i < total; ++i) {
    if (stop.stop_requested()) return Stopped(kManifests, first);
    const YAML::Node& object = objects[i];
    const std::string path = ObjectPath(object);
    const YAML::Node meta =
        object.IsMap() && object["metadata"] ? object["metadata"] : YAML::Node();
    const std::string ns = Field(meta, "namespace");
    const std::string name = fmt::format("{} {}{}", Field(object, "kind"),
                                         ns.empty() ? "" : ns + "/", Field(meta, "name"));
    absl::StatusOr<std::string> live = kube_.GetObject(path);
    if (!live.ok() && !absl::IsNotFound(live.status())) {
      return Failure{live.status(), kManifests, ""};
    }
    const bool current = live.ok() && Covers(json::parse(*live, nullptr, false), object);
    if (!current) {
      if (Step s = Fenced(kManifests, first)) return s;
      YAML::Emitter body;
      body << object;
      if (absl::Status s = kube_.ApplyObject(path, body.c_str(), kFieldManager); !s.ok()) {
        return Failure{
            absl::Status(s.code(), fmt::format("applying {}: {}", name, std::string(s.message()))),
            kManifests, ""};
      }
      ++outcome.manifests_applied;
    }
    Report(kManifests, i + 1, total,
           fmt::format("manifests {}/{}: {} {}", i + 1, total, name,
                       current ? "already current" : "applied"));
  }
  return std::nullopt;
}

}  // namespace tr::reconciler::k8s_upgrade
