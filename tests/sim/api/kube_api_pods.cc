// Pods, evictions, PodDisruptionBudgets and Leases of the fake Kubernetes API.
#include <httplib.h>

#include "fmt/chrono.h"
#include "fmt/format.h"
#include "tests/sim/common/ids.h"
#include "tests/sim/common/json_reply.h"
#include "tests/sim/api/kube_api.h"
#include "tests/sim/api/kube_jobs.h"
#include "tests/sim/api/kube_paging.h"
#include "tests/sim/api/kube_tables.h"

namespace tr::sim {
namespace {

using nlohmann::json;

json NotFound(const std::string& resource, const std::string& name) {
  return {{"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", json::object()},
          {"status", "Failure"},
          {"message", fmt::format("{} \"{}\" not found", resource, name)},
          {"reason", "NotFound"},
          {"details", {{"name", name}, {"kind", resource}}},
          {"code", 404}};
}

bool PodSelected(const httplib::Request& req, const json& pod) {
  const std::string field = req.get_param_value("fieldSelector");
  if (field.rfind("spec.nodeName=", 0) == 0 &&
      pod["spec"].value("nodeName", "") != field.substr(14)) {
    return false;
  }
  const std::string label = req.get_param_value("labelSelector");
  if (auto eq = label.find('='); eq != std::string::npos) {
    const std::string k = label.substr(0, eq);
    const std::string v = label.substr(label[eq + 1] == '=' ? eq + 2 : eq + 1);
    const json& labels = pod["metadata"]["labels"];
    if (!labels.contains(k) || labels[k] != v) return false;
  }
  return true;
}

// A Status of a refused request, as the API server words it.
json Refusal(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
          {"status", "Failure"}, {"message", message}, {"reason", reason},
          {"code", code}};
}

// What the API server's validation of a Lease refuses (422 Invalid), or "" when it is valid.
std::string InvalidLease(const json& lease, const std::string& name) {
  if (!lease.contains("spec")) return "";
  const json& spec = lease["spec"];
  if (!spec.is_object())
    return fmt::format("Lease \"{}\" is invalid: spec: must be an object", name);
  for (const char* field : {"leaseDurationSeconds", "leaseTransitions"}) {
    if (!spec.contains(field)) continue;
    const json& v = spec[field];
    const bool duration = std::string(field) == "leaseDurationSeconds";
    if (!v.is_number_integer() || v.get<int64_t>() < (duration ? 1 : 0)) {
      return fmt::format(
          "Lease.coordination.k8s.io \"{}\" is invalid: spec.{}: Invalid value: {}: "
          "must be {}",
          name, field, v.dump(),
          duration ? "greater than 0"
                   : "greater than or "
                     "equal to 0");
    }
  }
  return "";
}

std::string Now(WallTime t) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.000000Z",
                     std::chrono::time_point_cast<std::chrono::seconds>(t));
}

}  // namespace

void KubeApiServer::PodRoutes() {
  httplib::SSLServer& s = *server_;
  auto list = [this](const httplib::Request& req, httplib::Response& res, const std::string& ns) {
    std::lock_guard lock(cluster_->mu());
    json items = json::array();
    for (const auto& pod : cluster_->pods()) {
      if (!ns.empty() && pod.ns != ns) continue;
      json obj = cluster_->KubePodJsonLocked(pod);
      if (PodSelected(req, obj)) items.push_back(std::move(obj));
    }
    jobs_->AppendPods(
        ns, [&req](const json& obj) { return PodSelected(req, obj); }, items);
    const uint64_t rv = cluster_->NextResourceVersionLocked();
    ListPager::Page page = pager_->Take(req, std::move(items), rv);
    if (page.code != 200) return SendJson(res, page.code, page.items);
    if (req.get_header_value("Accept").find("as=Table") != std::string::npos) {
      json table = PodTable(page.items, cluster_->scheduler().WallNow(), rv);
      table["metadata"] = page.metadata;
      return SendJson(res, 200, table);
    }
    SendJson(res, 200,
             {{"kind", "PodList"},
              {"apiVersion", "v1"},
              {"metadata", page.metadata},
              {"items", page.items}});
  };
  s.Get("/api/v1/pods",
        [list](const httplib::Request& req, httplib::Response& res) { list(req, res, ""); });
  s.Get("/api/v1/namespaces/([^/]+)/pods",
        [list](const httplib::Request& req, httplib::Response& res) {
          list(req, res, req.matches[1].str());
        });
  s.Get("/api/v1/namespaces/([^/]+)/pods/([^/]+)",
        [this](const httplib::Request& req, httplib::Response& res) {
          if (auto pod = jobs_->Pod(req.matches[1].str(), req.matches[2].str())) {
            return SendJson(res, 200, *pod);
          }
          std::lock_guard lock(cluster_->mu());
          for (const auto& pod : cluster_->pods()) {
            if (pod.ns == req.matches[1].str() && pod.name == req.matches[2].str()) {
              return SendJson(res, 200, cluster_->KubePodJsonLocked(pod));
            }
          }
          SendJson(res, 404, NotFound("pods", req.matches[2].str()));
        });
  s.Delete("/api/v1/namespaces/([^/]+)/pods/([^/]+)",
           [this](const httplib::Request& req, httplib::Response& res) {
             if (auto pod = jobs_->DeletePod(req.matches[1].str(), req.matches[2].str())) {
               return SendJson(res, 200, *pod);
             }
             std::lock_guard lock(cluster_->mu());
             auto& pods = cluster_->pods();
             for (auto it = pods.begin(); it != pods.end(); ++it) {
               if (it->ns != req.matches[1].str() || it->name != req.matches[2].str()) continue;
               json obj = cluster_->KubePodJsonLocked(*it);
               KubePod pod = *it;
               pods.erase(it);
               // A DELETE passes no budget: the journal tells it from an eviction.
               if (SimNode* node = cluster_->FindNodeLocked(pod.node)) {
                 cluster_->JournalStateLocked(*node, "delete", pod.ns + "/" + pod.name);
               }
               cluster_->RescheduleLocked(std::move(pod));
               return SendJson(res, 200, obj);
             }
             SendJson(res, 404, NotFound("pods", req.matches[2].str()));
           });
  s.Post("/api/v1/namespaces/([^/]+)/pods/([^/]+)/eviction",
         [this](const httplib::Request& req, httplib::Response& res) {
           std::lock_guard lock(cluster_->mu());
           auto [code, body] = cluster_->EvictLocked(req.matches[1].str(), req.matches[2].str());
           SendJson(res, code, body);
         });
  auto pdbs = [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(cluster_->mu());
    const std::string ns = req.matches.size() > 1 ? req.matches[1].str() : "";
    json items = json::array();
    for (const auto& pdb : cluster_->spec().pdbs) {
      if (!ns.empty() && pdb.namespace_name != ns) continue;
      json obj = cluster_->PdbJsonLocked(pdb);
      if (MatchesSelectors(obj, req.get_param_value("labelSelector"),
                           req.get_param_value("fieldSelector"))) {
        items.push_back(std::move(obj));
      }
    }
    SendList(req, res, "PodDisruptionBudgetList", "policy/v1", std::move(items),
             cluster_->ResourceVersionLocked());
  };
  s.Get("/apis/policy/v1/poddisruptionbudgets", pdbs);
  s.Get("/apis/policy/v1/namespaces/([^/]+)/poddisruptionbudgets", pdbs);
}

void KubeApiServer::SendList(const httplib::Request& req, httplib::Response& res,
                             const std::string& kind, const std::string& api_version,
                             json items, uint64_t rv) {
  ListPager::Page page = pager_->Take(req, std::move(items), rv);
  if (page.code != 200) return SendJson(res, page.code, page.items);
  SendJson(res, 200,
           {{"kind", kind},
            {"apiVersion", api_version},
            {"metadata", page.metadata},
            {"items", page.items}});
}

void KubeApiServer::StorageRoutes() {
  httplib::SSLServer& s = *server_;
  auto route = [this, &s](const std::string& path, const std::string& kind,
                          const std::string& api_version,
                          json (SimCluster::*objects)() const) {
    s.Get(path, [this, kind, api_version, objects](const httplib::Request& req,
                                                   httplib::Response& res) {
      std::lock_guard lock(cluster_->mu());
      const std::string ns = req.matches.size() > 1 ? req.matches[1].str() : "";
      json items = json::array();
      for (auto& obj : (cluster_->*objects)()) {
        if (!ns.empty() && obj["metadata"].value("namespace", "") != ns) continue;
        if (MatchesSelectors(obj, req.get_param_value("labelSelector"),
                             req.get_param_value("fieldSelector"))) {
          items.push_back(std::move(obj));
        }
      }
      SendList(req, res, kind, api_version, std::move(items), cluster_->ResourceVersionLocked());
    });
  };
  route("/api/v1/persistentvolumes", "PersistentVolumeList", "v1",
        &SimCluster::PersistentVolumesJsonLocked);
  route("/api/v1/persistentvolumeclaims", "PersistentVolumeClaimList", "v1",
        &SimCluster::PersistentVolumeClaimsJsonLocked);
  route("/api/v1/namespaces/([^/]+)/persistentvolumeclaims", "PersistentVolumeClaimList", "v1",
        &SimCluster::PersistentVolumeClaimsJsonLocked);
  route("/apis/storage.k8s.io/v1/storageclasses", "StorageClassList", "storage.k8s.io/v1",
        &SimCluster::StorageClassesJsonLocked);
}

void KubeApiServer::LeaseRoutes() {
  httplib::SSLServer& s = *server_;
  const std::string base = "/apis/coordination.k8s.io/v1/namespaces/([^/]+)/leases";
  // Node heartbeats live in kube-node-lease and follow the machines.
  auto node_lease = [this](const SimNode& node) {
    return json{{"kind", "Lease"},
                {"apiVersion", "coordination.k8s.io/v1"},
                {"metadata",
                 {{"name", node.spec.name},
                  {"namespace", "kube-node-lease"},
                  {"resourceVersion", std::to_string(node.kube_resource_version)}}},
                {"spec",
                 {{"holderIdentity", node.spec.name},
                  {"leaseDurationSeconds", 40},
                  {"renewTime", Now(cluster_->scheduler().WallNow())}}}};
  };
  s.Get(base, [this, node_lease](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(cluster_->mu());
    json items = json::array();
    if (req.matches[1].str() == "kube-node-lease") {
      for (const auto& node : cluster_->nodes()) {
        if (node->kube_ready) items.push_back(node_lease(*node));
      }
    }
    for (const auto& [key, lease] : cluster_->leases()) {
      if (lease["metadata"]["namespace"] == req.matches[1].str() &&
          MatchesSelectors(lease, req.get_param_value("labelSelector"),
                           req.get_param_value("fieldSelector"))) {
        items.push_back(lease);
      }
    }
    SendJson(
        res, 200,
        {{"kind", "LeaseList"},
         {"apiVersion", "coordination.k8s.io/v1"},
         {"metadata", {{"resourceVersion", std::to_string(cluster_->ResourceVersionLocked())}}},
         {"items", items}});
  });
  s.Get(base + "/([^/]+)", [this, node_lease](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(cluster_->mu());
    const std::string ns = req.matches[1].str(), name = req.matches[2].str();
    if (ns == "kube-node-lease") {
      SimNode* node = cluster_->FindNodeLocked(name);
      if (node != nullptr && node->kube_ready) return SendJson(res, 200, node_lease(*node));
    }
    auto it = cluster_->leases().find(ns + "/" + name);
    if (it == cluster_->leases().end()) {
      return SendJson(res, 404, NotFound("leases.coordination.k8s.io", name));
    }
    SendJson(res, 200, it->second);
  });
  // Create: 409 AlreadyExists for a taken name; the server sets uid, resourceVersion and
  // creationTimestamp.
  s.Post(base, [this](const httplib::Request& req, httplib::Response& res) {
    json lease = json::parse(req.body, nullptr, false);
    if (!lease.is_object() || !lease.contains("metadata") ||
        lease["metadata"].value("name", "").empty()) {
      return SendJson(
          res, lease.is_object() ? 422 : 400,
          Refusal(lease.is_object() ? 422 : 400, lease.is_object() ? "Invalid" : "BadRequest",
                  lease.is_object() ? "Lease.coordination.k8s.io \"\" is invalid: "
                                      "metadata.name: Required value: name or "
                                      "generateName is required"
                                    : "the body of the request was in an unknown format"));
    }
    std::lock_guard lock(cluster_->mu());
    const std::string ns = req.matches[1].str();
    const std::string name = lease["metadata"].value("name", "");
    if (std::string invalid = InvalidLease(lease, name); !invalid.empty()) {
      return SendJson(res, 422, Refusal(422, "Invalid", invalid));
    }
    const std::string key = ns + "/" + name;
    if (cluster_->leases().contains(key)) {
      return SendJson(
          res, 409,
          Refusal(409, "AlreadyExists",
                  fmt::format("leases.coordination.k8s.io \"{}\" already exists", name)));
    }
    lease["kind"] = "Lease";
    lease["apiVersion"] = "coordination.k8s.io/v1";
    lease["metadata"]["namespace"] = ns;
    lease["metadata"]["uid"] = NewUuid();
    lease["metadata"]["creationTimestamp"] =
        Now(cluster_->scheduler().WallNow()).substr(0, 19) + "Z";
    lease["metadata"]["resourceVersion"] = std::to_string(cluster_->NextResourceVersionLocked());
    cluster_->leases()[key] = lease;
    SendJson(res, 201, lease);
  });
  // Replace: optimistic concurrency on metadata.resourceVersion (a stale or missing one is a
  // 409 Conflict, as the API server answers for an object whose strategy forbids unconditional
  // updates); uid and creationTimestamp stay the server's.
  s.Put(base + "/([^/]+)", [this](const httplib::Request& req, httplib::Response& res) {
    json lease = json::parse(req.body, nullptr, false);
    const std::string name = req.matches[2].str();
    if (!lease.is_object() || !lease.contains("metadata")) {
      return SendJson(
          res, 400, Refusal(400, "BadRequest", "the body of the request was in an unknown format"));
    }
    if (lease["metadata"].value("name", name) != name) {
      return SendJson(res, 400,
                      Refusal(400, "BadRequest",
                              "the name of the object (" + lease["metadata"].value("name", "") +
                                  ") does not match the name on the URL (" + name + ")"));
    }
    if (std::string invalid = InvalidLease(lease, name); !invalid.empty()) {
      return SendJson(res, 422, Refusal(422, "Invalid", invalid));
    }
    std::lock_guard lock(cluster_->mu());
    auto it = cluster_->leases().find(req.matches[1].str() + "/" + name);
    if (it == cluster_->leases().end()) {
      return SendJson(res, 404, NotFound("leases.coordination.k8s.io", name));
    }
    if (lease["metadata"].value("resourceVersion", "") !=
        it->second["metadata"]["resourceVersion"]) {
      return SendJson(res, 409,
                      Refusal(409, "Conflict",
                              fmt::format("Operation cannot be fulfilled on "
                                          "leases.coordination.k8s.io \"{}\": the object has "
                                          "been modified; please apply your changes to the "
                                          "latest version and try again",
                                          name)));
    }
    lease["kind"] = "Lease";
    lease["apiVersion"] = "coordination.k8s.io/v1";
    lease["metadata"]["name"] = name;
    lease["metadata"]["namespace"] = req.matches[1].str();
    lease["metadata"]["uid"] = it->second["metadata"]["uid"];
    lease["metadata"]["creationTimestamp"] = it->second["metadata"]["creationTimestamp"];
    lease["metadata"]["resourceVersion"] = std::to_string(cluster_->NextResourceVersionLocked());
    it->second = lease;
    SendJson(res, 200, lease);
  });
  s.Delete(base + "/([^/]+)", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(cluster_->mu());
    const std::string name = req.matches[2].str();
    if (cluster_->leases().erase(req.matches[1].str() + "/" + name) == 0) {
      return SendJson(res, 404, NotFound("leases.coordination.k8s.io", name));
    }
    SendJson(res, 200,
             {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Success"}, {"code", 200}});
  });
}

}  // namespace tr::sim
