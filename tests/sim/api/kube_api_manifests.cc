// The workloads of the bootstrap manifests on the fake Kubernetes API: the kube-proxy DaemonSet
// and the CoreDNS Deployment in kube-system, read with GET, changed with a server-side apply
// (PATCH, Content-Type application/apply-patch+yaml, fieldManager required) and removed with
// DELETE, as `talosctl upgrade-k8s` syncs and prunes the manifests Talos renders.
//
// Modelled: the container image (a new one rolls the workload out:
// SimCluster::SetBootstrapWorkloadImageLocked, and bumps metadata.generation), the annotations an
// apply sets, managedFields (who owns which field; a forced apply takes the fields it sets from
// every other manager, and a manager left with none disappears, as the API server does), the
// rollout status (DaemonSet: from the kube-proxy pods; the CoreDNS Deployment is always rolled
// out), and a DELETE (the DaemonSet's pods go with it, as the garbage collector does with
// propagationPolicy Background). Not modelled: field conflicts without force (the reconciler and
// talosctl always force), list items keyed by name in managedFields, other fields' values.
#include "tests/sim/api/kube_api_manifests.h"

#include <httplib.h>

#include <algorithm>

#include "fmt/format.h"
#include "tests/sim/common/json_reply.h"
#include "tests/sim/api/kube_api.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

using nlohmann::json;

struct BootstrapWorkload {
  const char* plural;  // "daemonsets"
  const char* kind;    // "DaemonSet"
  const char* name;    // also the container's name
};

constexpr BootstrapWorkload kWorkloads[] = {{"daemonsets", "DaemonSet", "kube-proxy"},
                                            {"deployments", "Deployment", "coredns"}};

json BootstrapWorkloadJson(const BootstrapWorkload& w, const std::string& image) {
  return {{"kind", w.kind},
          {"apiVersion", "apps/v1"},
          {"metadata", {{"name", w.name}, {"namespace", "kube-system"}}},
          {"spec",
           {{"selector", {{"matchLabels", {{"k8s-app", w.name}}}}},
            {"template",
             {{"metadata", {{"labels", {{"k8s-app", w.name}}}}},
              {"spec", {{"containers", json::array({{{"name", w.name}, {"image", image}}})}}}}}}}};
}

json ApplyYamlToJson(const YAML::Node& node) {
  if (node.IsMap()) {
    json out = json::object();
    for (const auto& entry : node)
      out[entry.first.as<std::string>("")] = ApplyYamlToJson(entry.second);
    return out;
  }
  if (node.IsSequence()) {
    json out = json::array();
    for (const YAML::Node& item : node) out.push_back(ApplyYamlToJson(item));
    return out;
  }
  return node.IsScalar() ? json(node.Scalar()) : json();
}

// The fields `object` sets, as managedFields counts them: every leaf and every list; the
// identity (apiVersion, kind, metadata.name/namespace) and status are nobody's.
void CollectManagedFields(const json& object, FieldPath& at, std::set<FieldPath>& out) {
  for (const auto& [key, value] : object.items()) {
    if (at.empty() && (key == "apiVersion" || key == "kind" || key == "status")) continue;
    if (at == FieldPath{"metadata"} && (key == "name" || key == "namespace")) continue;
    at.push_back(key);
    if (value.is_object() && !value.empty()) {
      CollectManagedFields(value, at, out);
    } else {
      out.insert(at);
    }
    at.pop_back();
  }
}

std::set<FieldPath> ManagedFieldsOf(const json& object) {
  std::set<FieldPath> out;
  FieldPath at;
  CollectManagedFields(object, at, out);
  return out;
}

// The fieldsV1 form of a field set: {"f:spec": {"f:template": {...}}}.
json FieldsV1(const std::set<FieldPath>& fields) {
  json out = json::object();
  for (const FieldPath& path : fields) {
    json* at = &out;
    for (const std::string& key : path) at = &(*at)["f:" + key];
    if (at->is_null()) *at = json::object();
  }
  return out;
}

// The state of `key`, as Talos before 1.13 created the object when it is first looked at:
// machined's `Create` with field manager `talos` (talos v1.12.0
// internal/app/machined/pkg/controllers/k8s/manifest_apply.go), no inventory annotation.
BootstrapObjectState& BootstrapStateOf(BootstrapObjects& objects, const BootstrapWorkload& w,
                                       const std::string& key, const std::string& image) {
  BootstrapObjectState& state = objects.objects[key];
  if (state.managers.empty() && !state.deleted) {
    state.managers[{"talos", "Update"}] = ManagedFieldsOf(BootstrapWorkloadJson(w, image));
  }
  return state;
}

json BootstrapRolloutStatus(const BootstrapWorkload& w, const BootstrapObjectState& state,
                            const std::string& image, const std::vector<KubePod>& pods) {
  if (std::string(w.kind) == "Deployment") {
    return {{"observedGeneration", state.generation},
            {"replicas", 2},
            {"updatedReplicas", 2},
            {"readyReplicas", 2},
            {"availableReplicas", 2}};
  }
  int64_t desired = 0, updated = 0, ready = 0;
  for (const KubePod& p : pods) {
    if (p.container != w.name) continue;
    ++desired;
    updated += p.image == image;
    ready += p.ready;  // numberReady counts every ready pod, old image or new
  }
  return {{"observedGeneration", state.generation},
          {"desiredNumberScheduled", desired},
          {"currentNumberScheduled", desired},
          {"updatedNumberScheduled", updated},
          {"numberReady", ready},
          {"numberAvailable", ready}};
}

json BootstrapObjectJson(const BootstrapWorkload& w, const BootstrapObjectState& state,
                         const std::string& image, const std::vector<KubePod>& pods) {
  json out = BootstrapWorkloadJson(w, image);
  json& meta = out["metadata"];
  meta["generation"] = state.generation;
  if (!state.annotations.empty()) meta["annotations"] = state.annotations;
  json managed = json::array();
  for (const auto& [who, fields] : state.managers) {
    managed.push_back({{"manager", who.first},
                       {"operation", who.second},
                       {"apiVersion", "apps/v1"},
                       {"fieldsType", "FieldsV1"},
                       {"fieldsV1", FieldsV1(fields)}});
  }
  meta["managedFields"] = std::move(managed);
  out["status"] = BootstrapRolloutStatus(w, state, image, pods);
  return out;
}

// A forced apply by `manager`: it owns exactly the fields it set; every other manager loses
// those, and one left with none is dropped.
void TakeFields(BootstrapObjectState& state, const std::string& manager,
                const std::set<FieldPath>& fields) {
  for (auto it = state.managers.begin(); it != state.managers.end();) {
    if (it->first != std::pair<std::string, std::string>{manager, "Apply"}) {
      for (const FieldPath& f : fields) it->second.erase(f);
    }
    it = it->second.empty() ? state.managers.erase(it) : std::next(it);
  }
  state.managers[{manager, "Apply"}] = fields;
}

// The object of an apply body; a body that is not YAML, or names another object, is refused as
// the API server does.
absl::StatusOr<json> AppliedBootstrapObject(const BootstrapWorkload& w, const std::string& body) {
  try {
    json object = ApplyYamlToJson(YAML::Load(body));
    if (!object.is_object() || object.value("kind", "") != w.kind ||
        !object["metadata"].is_object() || object["metadata"].value("name", "") != w.name) {
      return absl::InvalidArgumentError(
          fmt::format("the apply names another object than {} kube-system/{}", w.kind, w.name));
    }
    return object;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("error decoding YAML: {}", e.what()));
  }
}

// The image the applied object gives the workload's container; "" when it names none.
std::string AppliedImageOf(const BootstrapWorkload& w, const json& object) {
  const json* containers = &object;
  for (const char* key : {"spec", "template", "spec", "containers"}) {
    if (!containers->is_object() || !containers->contains(key)) return "";
    containers = &(*containers)[key];
  }
  if (!containers->is_array()) return "";
  for (const json& c : *containers) {
    if (c.is_object() && c.value("name", "") == w.name) return c.value("image", "");
  }
  return "";
}

}  // namespace

void KubeApiServer::BootstrapWorkloadRoutes() {
  for (const BootstrapWorkload& w : kWorkloads) {
    const std::string path =
        fmt::format("/apis/apps/v1/namespaces/kube-system/{}/{}", w.plural, w.name);
    const std::string key = fmt::format("{}/{}", w.plural, w.name);
    server_->Get(path, [this, w, key](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(cluster_->mu());
      const std::string image = cluster_->BootstrapWorkloadImageLocked(key);
      BootstrapObjectState& state = BootstrapStateOf(*bootstrap_, w, key, image);
      if (state.deleted) {
        return SendKubeFailure(res, 404, "NotFound",
                               fmt::format("{}.apps \"{}\" not found", w.plural, w.name), w.plural,
                               w.name);
      }
      SendJson(res, 200, BootstrapObjectJson(w, state, image, cluster_->pods()));
    });
    server_->Patch(path, [this, w, key](const httplib::Request& req, httplib::Response& res) {
      ApplyBootstrapWorkload(w.kind, key, req, res);
    });
    server_->Delete(path, [this, w, key](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(cluster_->mu());
      BootstrapObjectState& state =
          BootstrapStateOf(*bootstrap_, w, key, cluster_->BootstrapWorkloadImageLocked(key));
      if (state.deleted) {
        return SendKubeFailure(res, 404, "NotFound",
                               fmt::format("{}.apps \"{}\" not found", w.plural, w.name), w.plural,
                               w.name);
      }
      state = BootstrapObjectState{};
      state.deleted = true;
      std::erase_if(cluster_->pods(), [&](const KubePod& p) { return p.container == w.name; });
      cluster_->JournalStateLocked(*cluster_->nodes().front(), "manifest", key + " deleted");
      SendJson(res, 200,
               {{"kind", "Status"},
                {"apiVersion", "v1"},
                {"status", "Success"},
                {"details", {{"name", w.name}, {"group", "apps"}, {"kind", w.plural}}}});
    });
  }
}

void KubeApiServer::ApplyBootstrapWorkload(const std::string& kind, const std::string& key,
                                           const httplib::Request& req, httplib::Response& res) {
  const BootstrapWorkload& w = *std::find_if(std::begin(kWorkloads), std::end(kWorkloads),
                                             [&](const auto& x) { return kind == x.kind; });
  if (req.get_header_value("Content-Type").find("apply-patch+yaml") == std::string::npos) {
    return SendKubeFailure(res, 415, "UnsupportedMediaType",
                           "this fake accepts only server-side apply "
                           "(application/apply-patch+yaml) here");
  }
  const std::string manager = req.get_param_value("fieldManager");
  if (manager.empty()) {
    return SendKubeFailure(res, 400, "BadRequest",
                           "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required "
                           "value: is required for apply patch");
  }
  absl::StatusOr<json> object = AppliedBootstrapObject(w, req.body);
  if (!object.ok()) {
    return SendKubeFailure(res, 400, "BadRequest", std::string(object.status().message()));
  }
  std::lock_guard lock(cluster_->mu());
  const std::string before = cluster_->BootstrapWorkloadImageLocked(key);
  BootstrapObjectState& state = BootstrapStateOf(*bootstrap_, w, key, before);
  if (state.deleted) state = BootstrapObjectState{};  // an apply creates it again
  const std::string image = AppliedImageOf(w, *object);
  if (!image.empty() && image != before) {
    cluster_->SetBootstrapWorkloadImageLocked(key, image);
    ++state.generation;
  }
  const json& annotations = (*object)["metadata"]["annotations"];
  if (annotations.is_object()) {
    for (const auto& [k, v] : annotations.items()) {
      if (v.is_string()) state.annotations[k] = v.get<std::string>();
    }
  }
  TakeFields(state, manager, ManagedFieldsOf(*object));
  SendJson(
      res, 200,
      BootstrapObjectJson(w, state, cluster_->BootstrapWorkloadImageLocked(key), cluster_->pods()));
}

}  // namespace tr::sim
