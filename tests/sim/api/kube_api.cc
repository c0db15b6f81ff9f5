#include "tests/sim/api/kube_api.h"

#include <httplib.h>
#include <openssl/pem.h>

#include <optional>
#include <regex>

#include "core/text.h"
#include "fmt/chrono.h"
#include "fmt/format.h"
#include "tests/sim/common/http_listener.h"
#include "tests/sim/common/json_reply.h"
#include "tests/sim/api/kube_jobs.h"
#include "tests/sim/api/kube_paging.h"
#include "tests/sim/api/kube_tables.h"
#include "tests/sim/api/kube_workloads.h"

namespace tr::sim {
namespace {

using nlohmann::json;

json Status(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
          {"status", "Failure"}, {"message", message}, {"reason", reason},
          {"code", code}};
}

json List(const std::string& kind, const std::string& api_version, json items, uint64_t rv) {
  return {{"kind", kind},
          {"apiVersion", api_version},
          {"metadata", {{"resourceVersion", std::to_string(rv)}}},
          {"items", std::move(items)}};
}

bool Selected(const httplib::Request& req, const json& obj) {
  return MatchesSelectors(obj, req.get_param_value("labelSelector"),
                          req.get_param_value("fieldSelector"));
}

// The 403 of a list the fleet file's `deny_reads` names, as an API server answers a user RBAC
// does not allow to list it (a Forbidden Status without a name); nullopt for any other request.
std::optional<json> DeniedList(const httplib::Request& req, const ClusterSpec& spec) {
  static const std::regex kList(R"(^/(?:api|apis/([^/]+))/v1(?:/namespaces/([^/]+))?/([a-z]+)$)");
  std::smatch m;
  if (req.method != "GET" || spec.deny_reads.empty() || !std::regex_match(req.path, m, kList)) {
    return std::nullopt;
  }
  const std::string group = m[1].str(), ns = m[2].str(), resource = m[3].str();
  if (!spec.deny_reads.contains(resource)) return std::nullopt;
  const std::string user = "admin@" + spec.name;
  json details = {{"kind", resource}};
  if (!group.empty()) details["group"] = group;
  json status = Status(
      403, "Forbidden",
      fmt::format("{}{} is forbidden: User \"{}\" cannot list resource \"{}\" in API group "
                  "\"{}\" {}",
                  resource, group.empty() ? "" : "." + group, user, resource, group,
                  ns.empty() ? "at the cluster scope" : fmt::format("in the namespace \"{}\"", ns)));
  status["details"] = details;
  return status;
}

bool WantsTable(const httplib::Request& req) {
  return req.get_header_value("Accept").find("as=Table") != std::string::npos;
}

}  // namespace

absl::StatusOr<std::unique_ptr<KubeApiServer>> KubeApiServer::Start(SimCluster* cluster,
                                                                    const std::string& address,
                                                                    int port,
                                                                    const CertifiedKey& server_cert,
                                                                    std::string token) {
  auto bio_cert = std::unique_ptr<BIO, decltype(&BIO_free)>(
      BIO_new_mem_buf(server_cert.cert_pem.data(), static_cast<int>(server_cert.cert_pem.size())),
      BIO_free);
  auto bio_key = std::unique_ptr<BIO, decltype(&BIO_free)>(
      BIO_new_mem_buf(server_cert.key_pem.data(), static_cast<int>(server_cert.key_pem.size())),
      BIO_free);
  X509* cert = PEM_read_bio_X509(bio_cert.get(), nullptr, nullptr, nullptr);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio_key.get(), nullptr, nullptr, nullptr);
  if (cert == nullptr || key == nullptr) {
    X509_free(cert);
    EVP_PKEY_free(key);
    return absl::InternalError("kube api: cannot read the server certificate or key");
  }
  std::unique_ptr<KubeApiServer> api(new KubeApiServer());
  api->cluster_ = cluster;
  api->token_ = std::move(token);
  api->server_ = std::make_unique<httplib::SSLServer>(cert, key);
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!api->server_->is_valid()) return absl::InternalError("kube api: TLS setup failed");
  api->server_->new_task_queue = [] { return new httplib::ThreadPool(4); };
  // A kube-apiserver keeps a client's connection open for many requests (httplib's default
  // closes it after 5, so a reconciler polling every few hundred ms would pay a TLS handshake
  // on both sides every few polls).
  api->server_->set_keep_alive_max_count(1000);
  // kube-apiserver is written in Go, whose sockets have TCP_NODELAY: httplib writes an answer's
  // headers and body apart, and Nagle's algorithm would hold the body for the client's delayed
  // acknowledgement (40 ms).
  api->server_->set_tcp_nodelay(true);
  api->Routes();
  if (!api->server_->bind_to_port(address, port)) {
    return absl::UnavailableError(fmt::format("kube api: cannot bind {}:{}", address, port));
  }
  api->url_ = fmt::format("https://{}:{}", address, port);
  api->thread_ = ListenInBackground(api->server_.get());
  return api;
}

KubeApiServer::~KubeApiServer() { Stop(); }

void KubeApiServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

void KubeApiServer::Routes() {
  httplib::SSLServer& s = *server_;
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") == "Bearer " + token_) {
      if (auto denied = DeniedList(req, cluster_->spec())) {
        SendJson(res, 403, *denied);
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    }
    SendJson(res, 401, Status(401, "Unauthorized", "Unauthorized"));
    return httplib::Server::HandlerResponse::Handled;
  });
  s.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    std::lock_guard lock(cluster_->mu());
    for (const auto& node : cluster_->nodes()) {
      if (!node->is_control_plane()) continue;
      cluster_->JournalCallLocked(*node, fmt::format("kube:{} {}", req.method, req.path), "",
                                  std::to_string(res.status), "", "");
      break;
    }
  });
  s.Get("/version", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lock(cluster_->mu());
    const std::string v = cluster_->KubeApiVersionLocked();
    const std::string bare = v.substr(1);
    auto parts = core::Split(bare, '.');
    SendJson(res, 200,
             {{"major", std::string(parts[0])},
              {"minor", std::string(parts[1])},
              {"gitVersion", v},
              {"gitCommit", "0000000000000000000000000000000000000000"},
              {"gitTreeState", "clean"},
              {"buildDate", "2026-01-01T00:00:00Z"},
              {"goVersion", "go1.24.6"},
              {"compiler", "gc"},
              {"platform", "linux/amd64"}});
  });
  s.Get("/api",
        [](const httplib::Request&, httplib::Response& res) { SendJson(res, 200, ApiVersions()); });
  s.Get("/apis",
        [](const httplib::Request&, httplib::Response& res) { SendJson(res, 200, ApiGroups()); });
  s.Get("/api/v1", [](const httplib::Request&, httplib::Response& res) {
    SendJson(res, 200, CoreResources());
  });
  s.Get(R"(/apis/(apps|policy|coordination\.k8s\.io|storage\.k8s\.io)/v1)",
        [](const httplib::Request& req, httplib::Response& res) {
          SendJson(res, 200, GroupResources(req.matches[1]));
        });
  s.Get("/api/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(cluster_->mu());
    json items = json::array();
    for (const auto& node : cluster_->nodes()) {
      json obj = cluster_->KubeNodeJsonLocked(*node);
      if (Selected(req, obj)) items.push_back(std::move(obj));
    }
    const uint64_t rv = cluster_->NextResourceVersionLocked();
    SendJson(res, 200,
             WantsTable(req) ? NodeTable(items, cluster_->scheduler().WallNow(), rv)
                             : List("NodeList", "v1", std::move(items), rv));
  });
  s.Get("/api/v1/nodes/([^/]+)", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(cluster_->mu());
    SimNode* node = cluster_->FindNodeLocked(req.matches[1].str());
    if (node == nullptr || node->spec.name != req.matches[1].str()) {
      return SendJson(
          res, 404,
          Status(404, "NotFound", fmt::format("nodes \"{}\" not found", req.matches[1].str())));
    }
    json obj = cluster_->KubeNodeJsonLocked(*node);
    SendJson(
        res, 200,
        WantsTable(req) ? NodeTable(json::array({obj}), cluster_->scheduler().WallNow(), 0) : obj);
  });
  s.Patch("/api/v1/nodes/([^/]+)", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(cluster_->mu());
    SimNode* node = cluster_->FindNodeLocked(req.matches[1].str());
    if (node == nullptr || node->spec.name != req.matches[1].str()) {
      return SendJson(
          res, 404,
          Status(404, "NotFound", fmt::format("nodes \"{}\" not found", req.matches[1].str())));
    }
    json patch = json::parse(req.body, nullptr, false);
    if (patch.is_discarded()) return SendJson(res, 400, Status(400, "BadRequest", "invalid JSON"));
    json current = cluster_->KubeNodeJsonLocked(*node);
    const std::string type = req.get_header_value("Content-Type");
    json patched = current;
    if (type.find("json-patch+json") != std::string::npos) {
      try {
        patched = current.patch(patch);
      } catch (const json::exception& e) {
        return SendJson(res, 422, Status(422, "Invalid", e.what()));
      }
    } else if (type.find("merge-patch+json") != std::string::npos) {
      patched.merge_patch(patch);
    } else {
      return SendJson(res, 415,
                      Status(415, "UnsupportedMediaType",
                             fmt::format("the body of the request was in an unknown "
                                         "format - accepted media types include: "
                                         "application/json-patch+json, "
                                         "application/merge-patch+json, "
                                         "application/strategic-merge-patch+json")));
    }
    if (!patched.is_object()) {
      return SendJson(res, 422, Status(422, "Invalid", "the patched Node is not an object"));
    }
    // As the API server stores the patched object: a label or annotation the patch deleted
    // (a merge patch's null, a JSON patch's remove) is gone, the others stay.
    cluster_->UpdateNodeLocked(*node, patched);
    SendJson(res, 200, cluster_->KubeNodeJsonLocked(*node));
  });
  jobs_ = std::make_unique<JobStore>(
      JobStore::Clock{[this] {
                        std::lock_guard lock(cluster_->mu());
                        return cluster_->NextResourceVersionLocked();
                      },
                      [this] {
                        const auto now = cluster_->scheduler().WallNow();
                        return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z",
                                           std::chrono::time_point_cast<std::chrono::seconds>(now));
                      }});
  jobs_->AddRoutes(s);
  // Before the workload store: kube-proxy (the DaemonSet kubectl drain looks up) and CoreDNS.
  BootstrapWorkloadRoutes();
  InventoryRoutes();
  pager_ = std::make_unique<ListPager>();
  PodRoutes();
  StorageRoutes();
  LeaseRoutes();
  workloads_ = std::make_unique<WorkloadStore>();
  workloads_->set_fleet_objects([this](const std::string& plural) {
    std::lock_guard lock(cluster_->mu());
    return cluster_->OwnerObjectsLocked(plural);
  });
  workloads_->AddRoutes(s);
  RemovedApiRoutes();
}

}  // namespace tr::sim
