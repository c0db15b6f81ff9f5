// The gRPC implementation of TalosClient: mutual TLS with a talosconfig context's material, one
// `node` metadata value per call, a deadline on every call, and failover across the context's
// endpoints.
//
// Routing: a call for node X dials one of the endpoints other than X when there is one, so a node
// that is being upgraded or rebooted is never the proxy for its own calls. A COSI watch of X is the
// exception: it goes through X itself when X is an endpoint (then the others), as it ends when X
// goes down wherever it goes through, and so another control plane's reboot does not end it. The
// endpoint that last answered is tried first. An endpoint whose connection is refused or fails the
// TLS handshake (or did so within the last reconnect backoff), or that does not connect within
// `timeouts.connect`, is skipped for the next; read-only calls (Version, ServiceList, Etcd*, COSI
// Get/List, Read, Kubeconfig) also move on when a call through an endpoint ends in Unavailable.
// Calls that change the node (Upgrade, Reboot, ApplyConfiguration, ...) and the long-lived Events
// stream are sent once: they fail over only when no connection was made, so a request is never
// delivered twice. A COSI watch (StartWatch) moves on as a read-only call until the node's first
// message establishes it; then it ends with its stream. No call moves on when the endpoint answers
// that it could not dial the node (apid's "Error while dialing": the node is down or coming up, and
// every endpoint would say the same); that node's next call starts at the next endpoint instead,
// whose own connection to the node may be up sooner (the other nodes' calls stay where they are).
// EtcdStatuses asks several nodes in one call that the endpoint's apid proxies to each (`nodes`
// metadata), through the endpoint that answered last; a node it could not reach is that node's
// error, not the call's.
// A watch has no deadline (it lasts until cancelled or broken) and holds no thread; destroy every
// watch's handle before the client.
//
// TLS: the server name checked is the endpoint host (apid's certificate has the node's IPs as
// SANs), as talosctl does; set `tls_server_name` when the endpoints are names or VIPs outside the
// certificate. Ed25519 material works with Debian's gRPC (OpenSSL 3).
//
// Thread-safety: the client is safe to use from several threads at once.
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "reconciler/clients/talos/talos_client.h"
#include "reconciler/clients/talos/talosconfig.h"

namespace tr::reconciler::talos {

// Deadlines per class of call, from the start of the call (connecting included).
struct TalosCallTimeouts {
  // Establishing a connection to one endpoint before moving on to the next.
  std::chrono::milliseconds connect{std::chrono::seconds(10)};
  // Version, ServiceList, Etcd*, COSI Get/List, Read, boot id.
  std::chrono::milliseconds read{std::chrono::seconds(30)};
  // Reboot, Rollback, ApplyConfiguration.
  std::chrono::milliseconds mutate{std::chrono::seconds(60)};
  // Upgrade (the node pulls and validates the installer image first), LifecycleService/Upgrade,
  // ImageService/Pull, ImagePull.
  std::chrono::milliseconds image{std::chrono::minutes(10)};
  // EtcdSnapshot, Kubeconfig.
  std::chrono::milliseconds transfer{std::chrono::minutes(10)};
};

struct GrpcTalosClientOptions {
  TalosCallTimeouts timeouts;
  // TLS name to check instead of the endpoint host; empty = the endpoint host.
  std::string tls_server_name;
  // Largest message accepted from a node (talosctl: 32 MiB).
  int max_receive_message_bytes = 32 * 1024 * 1024;
  // Upper bound of gRPC's reconnect backoff towards one endpoint; keeps a rebooted endpoint from
  // being ignored for minutes.
  std::chrono::milliseconds max_reconnect_backoff{std::chrono::seconds(5)};
  // A channel with no call in flight for this long closes its connection (gRPC's client idle
  // timeout, at least 1 s); the next call opens it again. An idle cluster then holds no
  // connection between its resyncs (default 5 min), at the cost of one TLS handshake per
  // endpoint at the next one.
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(1)};
  // The process's shutdown: once requested, every call in flight is cancelled (Cancelled) and
  // new calls fail at once, so a SIGTERM is not held up by a 10-minute transfer.
  std::stop_token shutdown;
};

// A client for the context's endpoints. InvalidArgument when the context has no endpoints or
// no TLS material. gRPC's deadlines are real time: `env` is the real environment (its clock
// sets the calls' deadlines).
absl::StatusOr<std::unique_ptr<TalosClient>> NewGrpcTalosClient(
    const TalosContext& context, Env& env, GrpcTalosClientOptions options = {});

}  // namespace tr::reconciler::talos
