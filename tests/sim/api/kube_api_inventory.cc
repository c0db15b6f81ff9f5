// Talos's inventory of the bootstrap manifests on the fake Kubernetes API: the ConfigMap
// kube-system/talos-bootstrap-manifests-inventory (talos v1.14.0-rc.1
// pkg/machinery/constants/constants.go), read with GET, created with POST and written with PUT,
// as go-kubernetes v0.2.41 kubernetes/ssa/internal/inventory/configmap/inventory.go does. Its
// data has one key per object, "<namespace>_<name>_<group>_<kind>", with an empty value. A PUT
// carrying a resourceVersion that is not the current one is a Conflict, as the API server answers
// it. No other ConfigMap is kept. Each change of the listed objects is journalled ("inventory").
#include <httplib.h>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "tests/sim/common/json_reply.h"
#include "tests/sim/api/kube_api.h"

namespace tr::sim {
namespace {

using nlohmann::json;

constexpr const char* kInventoryName = "talos-bootstrap-manifests-inventory";
constexpr const char* kConfigMaps = "/api/v1/namespaces/kube-system/configmaps";

// The object's data as a ConfigMap's: an object of strings. nullopt when it is not.
std::optional<json> ConfigMapDataOf(const json& object) {
  if (!object.contains("data") || object["data"].is_null()) return json::object();
  const json& data = object["data"];
  if (!data.is_object()) return std::nullopt;
  for (const auto& [key, value] : data.items()) {
    if (!value.is_string()) return std::nullopt;
  }
  return data;
}

std::string InventoryDataKeys(const json& data) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : data.items()) keys.push_back(key);
  return keys.empty() ? "(empty)" : fmt::format("{}", fmt::join(keys, ", "));
}

}  // namespace

void KubeApiServer::InventoryRoutes() {
  const std::string one = fmt::format("{}/{}", kConfigMaps, kInventoryName);
  auto not_found = [](httplib::Response& res) {
    SendKubeFailure(res, 404, "NotFound",
                    fmt::format("configmaps \"{}\" not found", kInventoryName), "configmaps",
                    kInventoryName);
  };
  server_->Get(one, [this, not_found](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lock(cluster_->mu());
    if (!bootstrap_->inventory) return not_found(res);
    SendJson(res, 200, *bootstrap_->inventory);
  });
  server_->Post(kConfigMaps, [this](const httplib::Request& req, httplib::Response& res) {
    const json object = json::parse(req.body, nullptr, false);
    std::optional<json> data = object.is_object() ? ConfigMapDataOf(object) : std::nullopt;
    if (!data || !object["metadata"].is_object()) {
      return SendKubeFailure(res, 400, "BadRequest", "the body is not a ConfigMap");
    }
    if (object["metadata"].value("name", "") != kInventoryName) {
      return SendKubeFailure(res, 400, "BadRequest",
                             fmt::format("this fake keeps only the ConfigMap {}", kInventoryName));
    }
    std::lock_guard lock(cluster_->mu());
    if (bootstrap_->inventory) {
      return SendKubeFailure(res, 409, "AlreadyExists",
                             fmt::format("configmaps \"{}\" already exists", kInventoryName),
                             "configmaps", kInventoryName);
    }
    WriteInventoryLocked(*data);
    SendJson(res, 201, *bootstrap_->inventory);
  });
  server_->Put(one, [this, not_found](const httplib::Request& req, httplib::Response& res) {
    const json object = json::parse(req.body, nullptr, false);
    std::optional<json> data = object.is_object() ? ConfigMapDataOf(object) : std::nullopt;
    if (!data) return SendKubeFailure(res, 400, "BadRequest", "the body is not a ConfigMap");
    std::lock_guard lock(cluster_->mu());
    if (!bootstrap_->inventory) return not_found(res);
    const std::string sent = object.contains("metadata") && object["metadata"].is_object()
                                 ? object["metadata"].value("resourceVersion", "")
                                 : "";
    if (!sent.empty() && sent != (*bootstrap_->inventory)["metadata"]["resourceVersion"]) {
      return SendKubeFailure(
          res, 409, "Conflict",
          fmt::format("Operation cannot be fulfilled on configmaps \"{}\": the object has been "
                      "modified; please apply your changes to the latest version and try again",
                      kInventoryName),
          "configmaps", kInventoryName);
    }
    WriteInventoryLocked(*data);
    SendJson(res, 200, *bootstrap_->inventory);
  });
}

void KubeApiServer::WriteInventoryLocked(const nlohmann::json& data) {
  const bool changed = !bootstrap_->inventory || (*bootstrap_->inventory)["data"] != data;
  bootstrap_->inventory =
      json{{"kind", "ConfigMap"},
           {"apiVersion", "v1"},
           {"metadata",
            {{"name", kInventoryName},
             {"namespace", "kube-system"},
             {"resourceVersion", std::to_string(cluster_->NextResourceVersionLocked())}}},
           {"data", data}};
  if (changed) {
    cluster_->JournalStateLocked(*cluster_->nodes().front(), "inventory", InventoryDataKeys(data));
  }
}

}  // namespace tr::sim
