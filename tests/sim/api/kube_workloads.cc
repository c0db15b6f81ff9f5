#include "tests/sim/api/kube_workloads.h"

#include <httplib.h>

#include "core/text.h"
#include "tests/sim/common/json_reply.h"

namespace tr::sim {
namespace {

using nlohmann::json;

constexpr const char* kCollection =
    R"(/apis/apps/v1/namespaces/([^/]+)/(deployments|replicasets|statefulsets|daemonsets))";
constexpr const char* kAllNamespaces = R"(/apis/apps/v1/(deployments|replicasets|statefulsets|daemonsets))";

std::string KindOf(const std::string& plural) {
  if (plural == "deployments") return "Deployment";
  if (plural == "statefulsets") return "StatefulSet";
  if (plural == "replicasets") return "ReplicaSet";
  return "DaemonSet";
}

}  // namespace

bool LabelsMatch(const std::string& selector, const json& obj) {
  const json labels = obj["metadata"].value("labels", json::object());
  for (auto part : core::Split(selector, ',')) {
    const std::string t(part);
    if (t.empty()) continue;
    const size_t ne = t.find("!="), eq = t.find('=');
    if (ne != std::string::npos) {
      const std::string k = t.substr(0, ne);
      if (labels.contains(k) && labels[k] == t.substr(ne + 2)) return false;
    } else if (eq != std::string::npos) {
      const std::string k = t.substr(0, eq);
      const std::string v = t.substr(t.compare(eq, 2, "==") == 0 ? eq + 2 : eq + 1);
      if (!labels.contains(k) || labels[k] != v) return false;
    } else if (!labels.contains(t)) {
      return false;
    }
  }
  return true;
}

void WorkloadStore::AddRoutes(httplib::Server& s) {
  auto list = [this](const std::string& plural, const std::string& ns, const httplib::Request& req,
                     httplib::Response& res) {
    json items = json::array();
    json fleet = fleet_objects_ ? fleet_objects_(plural) : json::array();
    std::lock_guard lock(mu_);
    for (const auto& [key, obj] : objects_) {
      if (!key.starts_with(plural + "/")) continue;
      if (!ns.empty() && obj["metadata"]["namespace"] != ns) continue;
      if (LabelsMatch(req.get_param_value("labelSelector"), obj)) items.push_back(obj);
    }
    for (auto& obj : fleet) {
      if (!ns.empty() && obj["metadata"]["namespace"] != ns) continue;
      if (LabelsMatch(req.get_param_value("labelSelector"), obj)) items.push_back(std::move(obj));
    }
    SendJson(res, 200,
             {{"kind", KindOf(plural) + "List"},
              {"apiVersion", "apps/v1"},
              {"metadata", json::object()},
              {"items", items}});
  };
  s.Get(kAllNamespaces, [list](const httplib::Request& req, httplib::Response& res) {
    list(req.matches[1], "", req, res);
  });
  s.Get(kCollection, [list](const httplib::Request& req, httplib::Response& res) {
    list(req.matches[2], req.matches[1], req, res);
  });
  s.Post(kCollection, [this](const httplib::Request& req, httplib::Response& res) {
    json obj = json::parse(req.body, nullptr, false);
    const std::string ns = req.matches[1], plural = req.matches[2];
    if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].contains("name")) {
      return SendKubeFailure(res, 400, "BadRequest", "metadata.name is required");
    }
    obj["metadata"]["namespace"] = ns;
    obj["metadata"]["generation"] = 1;
    obj["kind"] = KindOf(plural);
    obj["apiVersion"] = "apps/v1";
    if (!obj.contains("status")) obj["status"] = json::object();
    const std::string name = obj["metadata"]["name"];
    std::lock_guard lock(mu_);
    if (!objects_.emplace(plural + "/" + ns + "/" + name, obj).second) {
      return SendKubeFailure(res, 409, "AlreadyExists",
                             KindOf(plural) + " \"" + name + "\" already exists");
    }
    SendJson(res, 201, obj);
  });
  auto one = [this](const httplib::Request& req, httplib::Response& res, bool patch) {
    const std::string ns = req.matches[1], plural = req.matches[2], name = req.matches[3];
    const bool status_only = req.matches.size() > 4 && req.matches[4].length() > 0;
    json fleet = fleet_objects_ && !patch ? fleet_objects_(plural) : json::array();
    std::lock_guard lock(mu_);
    auto it = objects_.find(plural + "/" + ns + "/" + name);
    for (const auto& obj : fleet) {
      if (it == objects_.end() && obj["metadata"]["namespace"] == ns &&
          obj["metadata"]["name"] == name) {
        return SendJson(res, 200, obj);
      }
    }
    if (it == objects_.end()) {
      return SendKubeFailure(res, 404, "NotFound", plural + ".apps \"" + name + "\" not found");
    }
    if (!patch) return SendJson(res, 200, it->second);
    const json delta = json::parse(req.body, nullptr, false);
    if (!delta.is_object())
      return SendKubeFailure(res, 400, "BadRequest", "the patch is not a JSON object");
    json& obj = it->second;
    if (status_only) {
      if (delta.contains("status")) obj["status"].merge_patch(delta["status"]);
    } else {
      const json before = obj.value("spec", json::object());
      json patched = obj;
      patched.merge_patch(delta);
      patched["status"] = obj["status"];  // the main resource ignores status, as the API does
      if (patched.value("spec", json::object()) != before) {
        patched["metadata"]["generation"] = obj["metadata"].value("generation", 1) + 1;
      }
      obj = patched;
    }
    SendJson(res, 200, obj);
  };
  const std::string item = std::string(kCollection) + "/([^/]+)(/status)?";
  s.Get(item, [one](const httplib::Request& req, httplib::Response& res) { one(req, res, false); });
  s.Patch(item,
          [one](const httplib::Request& req, httplib::Response& res) { one(req, res, true); });
}

}  // namespace tr::sim
