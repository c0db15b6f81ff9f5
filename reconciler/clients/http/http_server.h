// An HTTP/1.1 server made to be exposed: the webhook listener (`--webhook-listen`) and the
// health, readiness and metrics endpoints (`--listen`) both run on it.
//
// One event loop (Boost.Asio, Boost.Beast's parser) on one thread of its own per server: an
// idle or slow connection costs a socket and a small buffer, never a thread, so connections
// that send nothing, or a byte a second, cannot keep a request from being answered. Every
// limit is explicit (ServerLimits) and every refusal is immediate:
//   more connections than max_connections (and probe_connections, for probe routes only), or
//   from one peer than max_connections_per_peer -> 503 at once, connection closed, nothing read
//   header bytes past max_header_bytes, or more than max_header_fields fields  -> 431, closed
//   a declared or sent body past max_body_bytes                               -> 413, closed
//   bodies in flight past max_bodies_in_flight_bytes (memory of the whole server), or past
//   a peer's share of it (1/body_budget_shares)                              -> 503
//   the request not complete within request_deadline (keep_alive_timeout for a second
//   request on a kept connection), or a body that brings no byte for body_progress_timeout
//                                       -> connection closed
//   no route for the path -> 404; another method -> 405; an unparsable request, a chunk
//   extension over 1 KiB, or fields after a chunked body (trailers) -> 400
// Each refusal is counted through `on_refused` with its reason (see RefusalReason) and logged
// with the peer's address, at most one line per reason a second (the next line says how many
// were held back).
//
// Handlers run on the server's thread and must be quick (verify, enqueue, answer); a slow
// handler delays that server only.
//
// Thread-safe: Start() and the destructor from one thread; handlers and on_refused are called
// from the server's thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/env.h"

namespace tr::reconciler::http {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // the target without its query
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  std::string body;
  std::string peer;  // the peer's address

  // The first header of that name (case-insensitive); "" when there is none.
  std::string Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  // When set, written instead of `body` and shared, not copied: a large text that many
  // connections read at once (/metrics, see RenderedText) is held once.
  std::shared_ptr<const std::string> shared_body = nullptr;
};

using Handler = std::function<Response(const Request&)>;

struct Route {
  std::string method;
  std::string path;
  Handler handler;
  // Also answered on the connections held for probes (ServerLimits::probe_connections).
  bool probe = false;
};

// The connection caps are derived from the memory limit they are sized for, the chart's
// default. A connection costs kConnectionBaseBytes (resident memory and the server's half of
// the kernel's socket structures, measured by tests/bench/connection_cost_bench and rounded
// up), plus, while its request's headers arrive, a buffer of up to the header limit and
// kReadSlackBytes. At its worst (every connection mid-headers) one listener's connections hold
// at most an eighth of the memory limit: 32 MiB of 256 MiB, 1,170 connections of 28 KiB.
inline constexpr std::size_t kSizedForMemoryBytes = std::size_t{256} << 20;
inline constexpr std::size_t kConnectionBaseBytes = std::size_t{8} << 10;
inline constexpr std::size_t kReadSlackBytes = std::size_t{4} << 10;  // one read past the limit
constexpr std::size_t ConnectionCapFor(std::size_t memory_bytes, std::size_t max_header_bytes) {
  return memory_bytes / 8 / (kConnectionBaseBytes + max_header_bytes + kReadSlackBytes);
}

struct ServerLimits {
  // Request line and every header line; forges, kubelets and Prometheus send 1-2 KiB.
  std::size_t max_header_bytes = 16 << 10;
  std::size_t max_connections = ConnectionCapFor(kSizedForMemoryBytes, max_header_bytes);
  std::size_t max_connections_per_peer = 64;
  std::size_t max_header_fields = 100;
  std::size_t max_body_bytes = 1 << 20;
  // Bytes of request bodies held at once, all connections together (a body is reserved at
  // its declared length, or at max_body_bytes when chunked).
  std::size_t max_bodies_in_flight_bytes = 16 << 20;
  // One address holds at most this fraction (1/N) of the bodies in flight, and never less than
  // one body of max_body_bytes: silent bodies from one address leave the rest to the others.
  std::size_t body_budget_shares = 4;
  std::chrono::milliseconds request_deadline{10'000};   // connection to the end of the request
  // A body that brings no byte for this long is cut and its reservation given back (an honest
  // sender writes its body right after the headers); request_deadline still bounds the whole.
  std::chrono::milliseconds body_progress_timeout{2'000};
  std::chrono::milliseconds keep_alive_timeout{5'000};  // answer to the end of the next one
  std::chrono::milliseconds write_timeout{10'000};  // an answer not read by then is cut
  // Connections held beyond max_connections for probe routes only (Route::probe): once the cap
  // is full, a new connection from an address under its own cap still gets one of these, and
  // is answered if it asks for a probe route within a second (503 otherwise), then closed.
  std::size_t probe_connections = 0;
  std::size_t max_requests_per_connection = 100;  // 1: every answer closes the connection
};

// The limits of the health, readiness and metrics listener (`--listen`): GET without a body,
// small headers, 16 connections from one address (a kubelet, a Prometheus), 8 connections held
// for /healthz and /readyz when the rest are taken.
ServerLimits ProbeEndpointLimits();

// Why a connection or a request was refused; the label on_refused is called with.
enum class RefusalReason {
  kConnections,      // the server's connection cap
  kPeerConnections,  // the per-peer connection cap
  kHeadersTooLarge,  // header bytes or fields
  kBodyTooLarge,
  kBusy,      // bodies in flight, all peers together
  kPeerBusy,  // bodies in flight from one peer
  kTimeout,
  kMalformed,
};
std::string_view RefusalReasonName(RefusalReason reason);

struct ServerOptions {
  std::string name;    // in logs: "webhook", "endpoints"
  std::string listen;  // host:port; port 0 picks a free port
  ServerLimits limits;
  std::vector<Route> routes;
  std::function<void(RefusalReason)> on_refused;  // may be empty
};

class HttpServer {
 public:
  // Binds `options.listen` and serves until destroyed; `env` times requests and throttles the
  // refusal lines. InvalidArgument for an address that is not host:port, Unavailable when it
  // cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(ServerOptions options, Env& env);
  ~HttpServer();  // stops serving, closes every connection, joins the thread
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  // The connections held now, as the loop's thread counts them (asked on that thread, so a
  // connection the loop has not accepted yet is not counted). For benchmarks and tests.
  std::size_t OpenConnections() const;

  struct State;  // the event loop and what it shares with its connections

 private:
  explicit HttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Splits "host:port" (the port may be 0). InvalidArgument when it is not that shape.
absl::StatusOr<std::pair<std::string, int>> SplitListenAddress(std::string_view listen);

}  // namespace tr::reconciler::http
