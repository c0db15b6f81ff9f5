#include "reconciler/clients/kube/http_kube_client.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <thread>

#include "absl/strings/numbers.h"
#include "base/env.h"
#include "base/http_client.h"
#include "base/http_outcome.h"
#include "base/mutex.h"
#include "base/percent_encoding.h"
#include "core/pending_mark.h"
#include "fmt/format.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "reconciler/clients/kube/idle_closer.h"
#include "reconciler/clients/kube/kube_tls.h"
#include "reconciler/clients/kube/kube_json.h"
#include "reconciler/clients/kube/node_watch_reader.h"
#include "reconciler/clients/kube/tls_tickets.h"
#include "reconciler/runtime/capped_request.h"

namespace tr::reconciler::kube {
namespace {

using nlohmann::json;

struct Endpoint {
  std::string host;
  int port = 443;
};

absl::StatusOr<Endpoint> ParseServer(const std::string& url) {
  constexpr std::string_view kScheme = "https://";
  if (url.rfind(kScheme, 0) != 0) {
    return absl::InvalidArgumentError("kubernetes server must be https://host[:port]");
  }
  std::string rest = url.substr(kScheme.size());
  if (auto slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  Endpoint e;
  const size_t colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(']') == std::string::npos) {
    e.port = std::atoi(rest.substr(colon + 1).c_str());
    rest.resize(colon);
  }
  e.host = rest;
  if (e.host.empty() || e.port <= 0 || e.port > 65535) {
    return absl::InvalidArgumentError("kubernetes server must be https://host[:port]");
  }
  return e;
}

// Maps an HTTP answer to a status whose code tells the caller what to do.
absl::Status FromResponse(const httplib::Result& res, std::string_view what) {
  if (!res) {
    // A refused certificate fails the handshake itself (see kube_tls.cc).
    const std::string_view hint = res.error() == httplib::Error::SSLConnection
                                      ? " (is the server certificate signed by the kubeconfig's "
                                        "CA, for this host?)"
                                      : "";
    return absl::UnavailableError(
        fmt::format("kubernetes {}: {}{}", what, httplib::to_string(res.error()), hint));
  }
  const HttpOutcome outcome = HttpOutcome::Of(res->status, res->headers);
  if (outcome.Succeeded()) return absl::OkStatus();
  const ApiError error = ApiErrorFromBody(res->body);
  const std::string message = error.message.empty() ? res->body.substr(0, 300) : error.message;
  const std::string& reason = error.reason;
  const std::string text = fmt::format("kubernetes {}: HTTP {}: {}", what, res->status, message);
  // A conflict (409) that is Kubernetes' AlreadyExists.
  if (outcome.Code() == absl::StatusCode::kAborted && reason == "AlreadyExists") {
    return absl::AlreadyExistsError(text);
  }
  return outcome.Error(text);
}

// Ends a client's calls when the process shuts down. httplib's stop() shuts the socket of a
// request in flight, but it waits for one still being opened (connect and TLS handshake hold
// httplib's socket lock, up to the connect timeout), so the socket being opened is shut down
// here first. The calling thread keeps a duplicate of that socket while its call runs: the
// socket stays alive under us and its number cannot be reused by another part of the process.
//
// Thread-safe.
class ShutdownCanceller {
 public:
  ShutdownCanceller(httplib::SSLClient& client, std::stop_token shutdown)
      : client_(client),
        shutdown_(std::move(shutdown)),
        on_shutdown_(shutdown_, [this] { Cancel(); }) {}
  ~ShutdownCanceller() {
    MutexLock lock(mu_);
    if (opening_ >= 0) ::close(opening_);
  }
  ShutdownCanceller(const ShutdownCanceller&) = delete;
  ShutdownCanceller& operator=(const ShutdownCanceller&) = delete;

  bool stopped() const { return shutdown_.stop_requested(); }

  // httplib opened `fd` for the calling thread's request and is about to connect it.
  void Opened(int fd) {
    MutexLock lock(mu_);
    if (opening_ >= 0) ::close(opening_);
    opening_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    opener_ = std::this_thread::get_id();
    if (opening_ >= 0 && shutdown_.stop_requested()) ::shutdown(opening_, SHUT_RDWR);
  }

  // The calling thread's request returned: its socket is httplib's alone again.
  void CallEnded() {
    MutexLock lock(mu_);
    if (opening_ >= 0 && opener_ == std::this_thread::get_id()) {
      ::close(opening_);
      opening_ = -1;
    }
  }

 private:
  void Cancel() {
    {
      MutexLock lock(mu_);
      if (opening_ >= 0) ::shutdown(opening_, SHUT_RDWR);  // ends connect or handshake
    }
    client_.stop();  // ends a request waiting for its answer
  }

  httplib::SSLClient& client_;
  const std::stop_token shutdown_;
  Mutex mu_;
  int opening_ ABSL_GUARDED_BY(mu_) = -1;
  std::thread::id opener_ ABSL_GUARDED_BY(mu_);
  // Last: registered once everything it uses exists, unregistered before it goes.
  std::stop_callback<std::function<void()>> on_shutdown_;
};

// A new client of the same server, with the same trust and credentials: a watch's (it holds
// its connection for as long as it runs).
using SslClientMaker = std::function<absl::StatusOr<std::unique_ptr<httplib::SSLClient>>()>;

class HttpKubeClient final : public KubeClient {
 public:
  HttpKubeClient(std::shared_ptr<TlsTickets> tickets, std::unique_ptr<httplib::SSLClient> client,
                 SslClientMaker new_watch_client, std::stop_token shutdown, size_t max_answer_bytes,
                 std::chrono::milliseconds idle_timeout, Env& env)
      : env_(env),
        tickets_(std::move(tickets)),
        new_watch_client_(std::move(new_watch_client)),
        shutdown_(shutdown),
        client_(std::move(client)),
        max_answer_bytes_(max_answer_bytes),
        idle_timeout_(idle_timeout),
        canceller_(*client_, std::move(shutdown)),
        last_used_(env_.Now()),
        closer_(IdleCloser::Shared(env_)),
        closer_id_(
            closer_->Add(idle_timeout_, [this](Env::TimePoint now) { return CloseIfIdle(now); })) {
    client_->set_socket_options([this](socket_t fd) { canceller_.Opened(fd); });
  }
  ~HttpKubeClient() override { closer_->Remove(closer_id_); }
  HttpKubeClient(const HttpKubeClient&) = delete;
  HttpKubeClient& operator=(const HttpKubeClient&) = delete;

  size_t OpenConnections() const { return client_->is_socket_open(); }
  TlsTickets::Handshakes Handshakes() const { return tickets_->handshakes(); }

  absl::StatusOr<std::vector<KubeNode>> ListNodes() override {
    absl::StatusOr<json> body = Get("/api/v1/nodes", "list nodes");
    if (!body.ok()) return body.status();
    return NodesFromList(*body);
  }

  absl::StatusOr<VersionedNodes> ListNodesVersioned() override {
    absl::StatusOr<json> body = Get("/api/v1/nodes", "list nodes");
    if (!body.ok()) return body.status();
    return VersionedNodes{NodesFromList(*body), ListVersion(*body)};
  }

  absl::Status WatchNodes(const std::string& resource_version, std::chrono::seconds timeout,
                          std::stop_token stop,
                          const std::function<bool(const NodeWatchEvent&)>& on_event) override {
    if (shutdown_.stop_requested()) {
      return absl::CancelledError("kubernetes watch nodes: shutting down");
    }
    absl::StatusOr<std::unique_ptr<httplib::SSLClient>> client = TakeWatchClient();
    if (!client.ok()) return client.status();
    absl::Status ended = ReadNodeWatch(
        **client, {resource_version, timeout, std::move(stop), shutdown_, max_answer_bytes_},
        on_event);
    ReturnWatchClient(std::move(*client));
    return ended;
  }

  absl::Status SetUnschedulable(const std::string& node, bool unschedulable) override {
    const json patch = {{"spec", {{"unschedulable", unschedulable}}}};
    return PatchNode(node, patch, unschedulable ? "cordon " + node : "uncordon " + node);
  }

  absl::Status SetPendingInstall(const std::string& node,
                                 const std::optional<std::string>& annotation) override {
    // A merge patch's null deletes the key (RFC 7396); the node's other keys stay.
    json patch;
    json& meta = patch["metadata"];
    meta["annotations"][std::string(core::kPendingInstallAnnotation)] =
        annotation ? json(*annotation) : json(nullptr);
    meta["labels"][std::string(core::kPendingRebootLabel)] =
        annotation ? json(std::string(core::kPendingRebootLabelValue)) : json(nullptr);
    return PatchNode(node, patch,
                     fmt::format("{} the pending install on {}", annotation ? "set" : "clear",
                                 node));
  }

  absl::StatusOr<std::vector<KubePod>> ListPodsOnNode(const std::string& node) override {
    absl::StatusOr<json> body =
        Get("/api/v1/pods?fieldSelector=spec.nodeName%3D" + node, "list pods on " + node);
    if (!body.ok()) return body.status();
    return PodsFromList(*body);
  }

  absl::Status EvictPod(const std::string& ns, const std::string& name) override {
    const json eviction = {{"apiVersion", "policy/v1"},
                           {"kind", "Eviction"},
                           {"metadata", {{"name", name}, {"namespace", ns}}}};
    const CappedAnswer res =
        Send(MakeRequest("POST", fmt::format("/api/v1/namespaces/{}/pods/{}/eviction", ns, name),
                         {}, eviction.dump(), "application/json"));
    absl::Status evicted = Checked(res, fmt::format("evict {}/{}", ns, name));
    // The eviction API refuses a pod under two budgets with a 500 however long one waits: as
    // a budget's 429 (not as a server that may answer later), the drain waits out its timeout,
    // then halts or forces.
    if (!evicted.ok() && res.result &&
        ApiErrorFromBody(res.result->body).message.find("more than one PodDisruptionBudget") !=
            std::string::npos) {
      return absl::ResourceExhaustedError(evicted.message());
    }
    return evicted;
  }

  absl::StatusOr<std::vector<KubePodDetail>> ListPods(const std::string& ns,
                                                const std::string& label_selector) override {
    std::string selector;
    for (char c : label_selector) selector += c == '=' ? std::string("%3D") : std::string(1, c);
    absl::StatusOr<json> body =
        Get(fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}", ns, selector),
            fmt::format("list pods {} in {}", label_selector, ns));
    if (!body.ok()) return body.status();
    return PodDetailsFromList(*body);
  }

  absl::StatusOr<int> CountObjects(const std::string& list_path) override {
    absl::StatusOr<json> body = Get(list_path, "list " + list_path);
    if (!body.ok()) return body.status();
    return static_cast<int>(ItemCount(*body));
  }

  absl::StatusOr<std::string> GetObject(const std::string& path) override {
    absl::StatusOr<json> body = Get(path, "get " + path);
    if (!body.ok()) return body.status();
    return body->dump();
  }

  absl::StatusOr<std::string> GetText(const std::string& path) override {
    return GetBody(path, "get " + path);
  }

  absl::Status ApplyObject(const std::string& path, const std::string& object_yaml,
                           const std::string& field_manager) override {
    const std::string target = fmt::format("{}?fieldManager={}&force=true", path,
                                           PercentEncode(field_manager));
    const CappedAnswer res =
        Send(MakeRequest("PATCH", target, {}, object_yaml, "application/apply-patch+yaml"));
    return Checked(res, "apply " + path);
  }

  absl::StatusOr<std::vector<core::WorkloadStatus>> ListWorkloads(
      const std::string& kind, const std::string& ns, const std::string& name,
      const std::string& selector) override {
    std::string plural = kind + "s";
    std::transform(plural.begin(), plural.end(), plural.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string path = fmt::format("/apis/apps/v1/namespaces/{}/{}", ns, plural);
    if (!name.empty()) {
      absl::StatusOr<json> one = Get(path + "/" + name, fmt::format("get {} {}/{}", kind, ns, name));
      if (!one.ok()) return one.status();
      return std::vector<core::WorkloadStatus>{WorkloadFromJson(kind, *one)};
    }
    if (!selector.empty()) path += "?labelSelector=" + PercentEncode(selector);
    absl::StatusOr<json> body = Get(path, fmt::format("list {} in {}", plural, ns));
    if (!body.ok()) return body.status();
    return WorkloadsFromList(kind, *body);
  }

  absl::StatusOr<std::string> CreateObject(const std::string& path,
                                           const std::string& object) override {
    return Text(Send(MakeRequest("POST", path, {}, object, "application/json")),
                "create in " + path);
  }

  absl::StatusOr<std::string> ReplaceObject(const std::string& path,
                                            const std::string& object) override {
    return Text(Send(MakeRequest("PUT", path, {}, object, "application/json")), "replace " + path);
  }

  absl::Status DeleteObject(const std::string& path, const std::string& options) override {
    return Checked(Send(MakeRequest("DELETE", path, {}, options, "application/json")),
                   "delete " + path);
  }

 private:
  // A JSON merge patch of the Node `node`.
  absl::Status PatchNode(const std::string& node, const json& patch, std::string_view what) {
    absl::StatusOr<std::string> written =
        Text(Send(MakeRequest("PATCH", "/api/v1/nodes/" + node, {}, patch.dump(),
                              "application/merge-patch+json")),
             std::string(what));
    if (!written.ok()) return written.status();
    NoteNodeWrite(*written);
    return absl::OkStatus();
  }

  std::string LastNodeWriteVersion() const override {
    MutexLock lock(write_mu_);
    return last_node_write_ == 0 ? std::string() : std::to_string(last_node_write_);
  }

  // Keeps the resourceVersion of the Node a write got back, the newest of them.
  void NoteNodeWrite(const std::string& answer) {
    const json node = json::parse(answer, nullptr, false);
    if (!node.is_object() || !node.contains("metadata")) return;
    const json& version = node["metadata"].value("resourceVersion", json());
    uint64_t parsed = 0;
    if (!version.is_string() || !absl::SimpleAtoi(version.get<std::string>(), &parsed)) return;
    MutexLock lock(write_mu_);
    last_node_write_ = std::max(last_node_write_, parsed);
  }

  absl::StatusOr<std::string> Text(CappedAnswer answer, const std::string& what) const {
    if (absl::Status s = Checked(answer, what); !s.ok()) return s;
    return std::move(answer.result->body);
  }

  // One request, unless the process is shutting down; its answer read up to the cap.
  CappedAnswer Send(httplib::Request request) {
    if (canceller_.stopped()) return {httplib::Result(nullptr, httplib::Error::Canceled), false};
    {
      MutexLock lock(idle_mu_);  // waits for an idle close under way: then a new connection
      ++in_flight_;
    }
    CappedAnswer answer = SendCapped(*client_, std::move(request), max_answer_bytes_);
    canceller_.CallEnded();
    MutexLock lock(idle_mu_);
    --in_flight_;
    last_used_ = env_.Now();
    return answer;
  }

  // httplib's stop() shuts the socket of a request in flight, so it is called only when none
  // is, and none can start until it returns.
  IdleCloser::Idle CloseIfIdle(Env::TimePoint now) {
    MutexLock lock(idle_mu_);
    if (in_flight_ > 0) return IdleCloser::Idle::kBusy;
    if (now - last_used_ < idle_timeout_ || !client_->is_socket_open()) {
      return IdleCloser::Idle::kIdle;
    }
    client_->stop();
    return IdleCloser::Idle::kClosed;
  }

  // A request the shutdown broke off is Cancelled, whatever httplib saw of it.
  absl::Status Checked(const CappedAnswer& answer, std::string_view what) const {
    if (answer.over_cap)
      return AnswerOverCap(fmt::format("kubernetes {}", what), max_answer_bytes_);
    const httplib::Result& res = answer.result;
    if (!res && canceller_.stopped()) {
      return absl::CancelledError(fmt::format("kubernetes {}: the process is stopping", what));
    }
    return FromResponse(res, what);
  }

  absl::StatusOr<json> Get(const std::string& path, std::string_view what) {
    absl::StatusOr<std::string> text = GetBody(path, what);
    if (!text.ok()) return text.status();
    json body = json::parse(*text, nullptr, false);
    if (!body.is_object()) return absl::InternalError(fmt::format("kubernetes {}: not JSON", what));
    return body;
  }

  absl::StatusOr<std::string> GetBody(const std::string& path, std::string_view what) {
    CappedAnswer res = Send(MakeRequest("GET", path));
    // The kept-alive connection may have been closed by the server since the last request
    // (its idle timeout); httplib finds out only when the answer does not come. A GET is
    // safe to send again, once, on a new connection.
    if (!res.result && !res.over_cap && res.result.error() != httplib::Error::Connection &&
        !canceller_.stopped()) {
      res = Send(MakeRequest("GET", path));
    }
    return Text(std::move(res), std::string(what));
  }

  // The client a watch ended with (its credentials parsed and its TLS context made), for the
  // next; a new one when another watch holds it.
  absl::StatusOr<std::unique_ptr<httplib::SSLClient>> TakeWatchClient() {
    {
      MutexLock lock(watch_mu_);
      if (spare_watch_client_ != nullptr) return std::move(spare_watch_client_);
    }
    return new_watch_client_();
  }
  void ReturnWatchClient(std::unique_ptr<httplib::SSLClient> client) {
    MutexLock lock(watch_mu_);
    if (spare_watch_client_ == nullptr) spare_watch_client_ = std::move(client);
  }

  Env& env_;
  // First: every TLS context of this client points to it, so it goes after them.
  const std::shared_ptr<TlsTickets> tickets_;
  const SslClientMaker new_watch_client_;
  Mutex watch_mu_;
  std::unique_ptr<httplib::SSLClient> spare_watch_client_ ABSL_GUARDED_BY(watch_mu_);
  const std::stop_token shutdown_;
  // One TLS context and one keep-alive connection for the cluster; httplib serialises the
  // requests made on it from several threads.
  const std::unique_ptr<httplib::SSLClient> client_;
  const size_t max_answer_bytes_;
  const std::chrono::milliseconds idle_timeout_;
  ShutdownCanceller canceller_;  // after client_: made after it, gone before it
  mutable Mutex write_mu_;
  uint64_t last_node_write_ ABSL_GUARDED_BY(write_mu_) = 0;  // 0: none yet
  Mutex idle_mu_;  // never held across a request
  int in_flight_ ABSL_GUARDED_BY(idle_mu_) = 0;
  Env::TimePoint last_used_ ABSL_GUARDED_BY(idle_mu_);  // the end of the last request
  // Last: registered once everything CloseIfIdle uses exists, removed before it goes.
  const std::shared_ptr<IdleCloser> closer_;
  const int closer_id_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<KubeClient>> NewHttpKubeClient(const KubeCredentials& credentials,
                                                              Env& env,
                                                              HttpKubeClientOptions options) {
  absl::StatusOr<Endpoint> endpoint = ParseServer(credentials.server);
  if (!endpoint.ok()) return endpoint.status();
  absl::StatusOr<KubeTls> tls = KubeTls::Parse(credentials);
  if (!tls.ok()) return tls.status();
  absl::StatusOr<std::unique_ptr<httplib::SSLClient>> client =
      tls->NewClient(endpoint->host, endpoint->port);
  if (!client.ok()) return client.status();
  SetHttpConnection(**client, options.connect_timeout, options.request_timeout);
  (*client)->set_keep_alive(true);
  auto tickets = std::make_shared<TlsTickets>();
  tickets->Attach((*client)->ssl_context());
  // The tickets live as long as the lambda, which the client holds, so they outlive each watch.
  SslClientMaker new_watch_client =
      [tls = *std::move(tls), endpoint = *endpoint, tickets, connect = options.connect_timeout,
       io = options.request_timeout]() -> absl::StatusOr<std::unique_ptr<httplib::SSLClient>> {
    absl::StatusOr<std::unique_ptr<httplib::SSLClient>> made =
        tls.NewClient(endpoint.host, endpoint.port);
    if (!made.ok()) return made.status();
    SetHttpConnection(**made, connect, io);
    tickets->Attach((*made)->ssl_context());
    return made;
  };
  return std::make_unique<HttpKubeClient>(std::move(tickets), std::move(*client),
                                          std::move(new_watch_client), std::move(options.shutdown),
                                          options.max_answer_bytes, options.idle_timeout, env);
}

size_t OpenConnections(const KubeClient& client) {
  const auto* http = dynamic_cast<const HttpKubeClient*>(&client);
  return http == nullptr ? 0 : http->OpenConnections();
}

TlsTickets::Handshakes TlsHandshakes(const KubeClient& client) {
  const auto* http = dynamic_cast<const HttpKubeClient*>(&client);
  return http == nullptr ? TlsTickets::Handshakes{} : http->Handshakes();
}

}  // namespace tr::reconciler::kube
