// The one set-up of an outbound HTTP(S) client (forge API, notification receivers, container
// registry, health-gate probes; the Kubernetes client takes the timeouts, its TLS is its own):
// timeouts, trust, redirects, the user agent, and what a request that got no answer means
// (what an answer means is base/http_outcome.h's).
// Proxies: none; every client connects to its server directly.
//
// Thread-safety: as httplib's client; the functions are thread-safe.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "httplib.h"

namespace tr {

// The User-Agent of every request (reconciler/runtime/capped_request.h's MakeRequest sets it).
inline constexpr char kUserAgent[] = "talos-reconciler";

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds io_timeout{10'000};  // each read and each write
  std::filesystem::path ca_file;                 // PEM bundle trusted instead of the system's
};

// A client of `origin` ("http(s)://host[:port]"): the options' timeouts, the server's
// certificate verified (against `ca_file` when set), redirects not followed. Never null.
std::unique_ptr<httplib::Client> NewHttpClient(const std::string& origin,
                                               const HttpClientOptions& options);

// The timeouts and the socket, for a client whose TLS is set up otherwise (httplib::SSLClient).
// TCP_NODELAY: httplib sends a request's headers and its body as two writes, and with Nagle's
// algorithm the second waits for the server's delayed acknowledgement, 40 ms on Linux. Go's
// clients and servers (kube-apiserver, forges) set it on every connection too.
template <typename HttplibClient>
void SetHttpConnection(HttplibClient& client, std::chrono::milliseconds connect,
                       std::chrono::milliseconds io) {
  client.set_connection_timeout(connect);
  client.set_read_timeout(io);
  client.set_write_timeout(io);
  client.set_tcp_nodelay(true);
}

// What a request that got no answer means to the caller, "<what>: <httplib's error>":
// DeadlineExceeded when a connect, read or write timed out, Unavailable otherwise; both say
// retry later.
absl::Status NoAnswerError(httplib::Error error, std::string_view what);

// What an answer means: base/http_outcome.h.

}  // namespace tr
