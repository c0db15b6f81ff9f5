#include "tests/sim/api/kube_api.h"

#include <httplib.h>
#include <openssl/pem.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
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

// What one watch of Nodes has sent and still owes.
struct NodeWatch {
  bool list_first = false;  // no resourceVersion (or "0"): every Node as ADDED first
  uint64_t after = 0;       // then the events after this resourceVersion
  bool bookmarks = false;   // allowWatchBookmarks=true
  bool table = false;       // each object as a one-row Table (kubectl get -w)
  std::string label_selector;
  std::string field_selector;
  Scheduler::TimePoint deadline;
  Scheduler::TimePoint next_bookmark;
};

// How long a watch with nothing to send sleeps: until its next bookmark or its end (a change of
// the cluster wakes it sooner, Stop too), at most a second, for a scheduler whose time moves
// only when a test moves it. Waking every 250 ms instead was the largest share of the
// simulator's CPU at 1,000 clusters (docs/benchmarks.md).
std::chrono::milliseconds NodeWatchSleep(const NodeWatch& watch, Scheduler::TimePoint now) {
  const Scheduler::TimePoint due =
      watch.bookmarks ? std::min(watch.deadline, watch.next_bookmark) : watch.deadline;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(due - now);
  return std::clamp(left, std::chrono::milliseconds(1), std::chrono::milliseconds(1000));
}

std::string WatchLine(const std::string& type, const json& object) {
  return json{{"type", type}, {"object", object}}.dump() + "\n";
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
  {
    // Under the cluster's lock: a watch checks the flag under it before it sleeps.
    std::lock_guard lock(cluster_->mu());
    stopping_ = true;
  }
  cluster_->cv().notify_all();
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
    const std::string watch = req.get_param_value("watch");
    if (watch == "1" || watch == "true") return WatchNodes(req, res);
    std::lock_guard lock(cluster_->mu());
    cluster_->SettleKubeNodesLocked();
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
    cluster_->SettleKubeNodesLocked();
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
    // The machine's own changes first, then the write: each its own watch event.
    cluster_->SettleKubeNodesLocked();
    cluster_->UpdateNodeLocked(*node, patched);
    cluster_->SettleKubeNodesLocked();
    cluster_->cv().notify_all();  // the watches
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

// As kube-apiserver serves a watch (apimachinery's watch protocol, the watch cache): 200, then
// a JSON object a line, `{"type": ..., "object": ...}`. Without a resourceVersion (or "0") every
// Node first as ADDED; from a resourceVersion the changes after it, or one ERROR event of a 410
// Expired Status when the history no longer reaches back to it; a Node entering or leaving the
// selectors' set as ADDED or DELETED; BOOKMARKs carrying the newest resourceVersion when asked
// for (every minute of fleet time); the stream ends after timeoutSeconds (1800 by default, the
// apiserver's --min-request-timeout) or when the server stops.
void KubeApiServer::WatchNodes(const httplib::Request& req, httplib::Response& res) {
  auto watch = std::make_shared<NodeWatch>();
  const std::string from = req.get_param_value("resourceVersion");
  watch->list_first = from.empty() || from == "0";
  if (!watch->list_first) {
    const auto [end, error] = std::from_chars(from.data(), from.data() + from.size(), watch->after);
    if (error != std::errc() || end != from.data() + from.size()) {
      return SendJson(res, 400,
                      Status(400, "BadRequest",
                             fmt::format("invalid value for resourceVersion: \"{}\"", from)));
    }
  }
  int timeout_s = 1800;
  if (req.has_param("timeoutSeconds")) {
    timeout_s = std::atoi(req.get_param_value("timeoutSeconds").c_str());
  }
  watch->bookmarks = req.get_param_value("allowWatchBookmarks") == "true";
  watch->table = WantsTable(req);
  watch->label_selector = req.get_param_value("labelSelector");
  watch->field_selector = req.get_param_value("fieldSelector");
  {
    std::lock_guard lock(cluster_->mu());
    const auto now = cluster_->scheduler().Now();
    watch->deadline = now + std::chrono::seconds(std::max(timeout_s, 0));
    watch->next_bookmark = now + cluster_->Scaled(std::chrono::minutes(1));
  }
  res.set_chunked_content_provider("application/json", [this, watch](size_t,
                                                                     httplib::DataSink& sink) {
    std::string out;
    bool end = false;
    {
      std::unique_lock lock(cluster_->mu());
      cluster_->SettleKubeNodesLocked();
      const auto now_wall = cluster_->scheduler().WallNow();
      const auto shape = [&](const json& object) {
        return watch->table ? NodeTable(json::array({object}), now_wall, 0) : object;
      };
      std::vector<SimCluster::KubeNodeEvent> events;
      if (watch->list_first) {
        watch->list_first = false;
        for (const auto& node : cluster_->nodes()) {
          events.push_back({0, "ADDED", cluster_->KubeNodeJsonLocked(*node), nullptr});
        }
        watch->after = cluster_->ResourceVersionLocked();
      } else if (auto after = cluster_->KubeNodeEventsAfterLocked(watch->after)) {
        events = *std::move(after);
      } else {
        out = WatchLine("ERROR", Status(410, "Expired",
                                        fmt::format("too old resource version: {} ({})",
                                                    watch->after,
                                                    cluster_->KubeNodeHistoryStartLocked())));
        end = true;
      }
      for (const auto& event : events) {
        watch->after = std::max(watch->after, event.resource_version);
        // As the cacher decides (cache_watcher.go): from the object before the event and
        // after it, not from what this watch sent, so a replay from a resourceVersion gives
        // the same events whenever the watch arrived.
        const auto fits = [&](const json& object) {
          return !object.is_null() &&
                 MatchesSelectors(object, watch->label_selector, watch->field_selector);
        };
        const bool in = fits(event.object);
        const bool was_in = fits(event.previous);
        if (in) {
          out += WatchLine(was_in ? event.type : "ADDED", shape(event.object));
        } else if (was_in) {
          // The object as it was when it still matched, at the event's resourceVersion.
          json gone = event.previous;
          gone["metadata"]["resourceVersion"] = std::to_string(event.resource_version);
          out += WatchLine("DELETED", shape(gone));
        }
      }
      const auto now = cluster_->scheduler().Now();
      if (watch->bookmarks && now >= watch->next_bookmark) {
        json mark = {{"kind", "Node"},
                     {"apiVersion", "v1"},
                     {"metadata", {{"resourceVersion", std::to_string(watch->after)}}}};
        out += WatchLine("BOOKMARK", mark);
        watch->next_bookmark = now + cluster_->Scaled(std::chrono::minutes(1));
      }
      end = end || now >= watch->deadline || stopping_ || cluster_->stopping();
      if (out.empty() && !end) cluster_->cv().wait_for(lock, NodeWatchSleep(*watch, now));
    }
    if (!out.empty() && !sink.write(out.data(), out.size())) return false;
    if (end) sink.done();
    return true;
  });
}

}  // namespace tr::sim
