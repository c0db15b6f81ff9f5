// KubeClient over HTTPS with cpp-httplib: the server's CA from the kubeconfig is the only trust
// anchor (never the system CA bundle), the server's certificate must name the host of the URL,
// credentials are a bearer token or a client certificate, every request has a timeout. One client
// holds one TLS context, built once, and one keep-alive connection, re-opened when the server
// closes it; the client closes it itself once no request has used it for `idle_timeout`, and
// the next request opens another (an idle cluster holds no connection between its resyncs). A
// server whose certificate is refused answers Unavailable and receives no request.
// The process's shutdown ends a call in flight at once (Cancelled), whether it is connecting,
// in its TLS handshake or waiting for the answer; calls made after it fail the same way without
// touching the network.
//
// Its connections share the TLS session tickets the server sends (TlsTickets): a connection opened
// after another resumes a session instead of a full handshake; a watch's client is kept for the
// next watch.
//
// Thread-safety: safe from several threads; their requests take turns on the one connection.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <stop_token>

#include "base/env.h"
#include "reconciler/clients/kube/kube_client.h"
#include "reconciler/clients/kube/kubeconfig.h"
#include "reconciler/clients/kube/tls_tickets.h"

namespace tr::reconciler::kube {

struct HttpKubeClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{15000};
  std::stop_token shutdown;  // the process's; none: calls end only by their timeouts
  // A longer answer fails (ResourceExhausted, naming the cap) without being read further.
  size_t max_answer_bytes = size_t{32} << 20;
  // A connection no request has used for this long is closed (by IdleCloser::Shared's one
  // thread, within half this again), never while a request is on it; the next request opens
  // another, at the cost of one TLS handshake.
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(1)};
};

// InvalidArgument for a server URL that is not https://host[:port], a kubeconfig CA with no
// certificate, or unusable client key material. `env` tells when a connection was last used.
absl::StatusOr<std::unique_ptr<KubeClient>> NewHttpKubeClient(const KubeCredentials& credentials,
                                                              Env& env,
                                                              HttpKubeClientOptions options = {});

// The connections `client`, made by NewHttpKubeClient, holds open now: 0 or 1 (0 for any other
// client).
size_t OpenConnections(const KubeClient& client);

// The TLS handshakes of `client`, made by NewHttpKubeClient, so far (none for any other client).
TlsTickets::Handshakes TlsHandshakes(const KubeClient& client);

}  // namespace tr::reconciler::kube
