// The inbound webhook listener (`--webhook-listen`): `POST /hooks/<dialect>` for every forge
// dialect (reconciler/clients/forge/forge_dialect.h: github, gitlab, gitea, forgejo, and generic
// for any other Git server whose hook script signs the body), on an address of its own so only it
// needs to be exposed to the forge. The dialect picks the headers and checks the signature.
//
// It runs on reconciler/clients/http's server, made for exposure (an event loop; connection,
// header, body and time limits, each refused at once: see reconciler/clients/http/http_server.h),
// so idle and slow connections cannot keep a delivery waiting. Refusals of the server are counted
// here as outcomes too (too_large, headers_too_large, connections, peer_connections, busy,
// peer_busy, timeout, malformed).
//
// Per delivery, answered within the request deadline and never after doing the work:
//   body over the cap      -> 413 as soon as the declared length or the bytes read pass the
//                             cap (the rest is not read; the connection is closed)
//   missing/bad signature  -> 401, counted as webhook_requests_total{outcome="bad_signature"}
//   a delivery id over 128 bytes -> 400 (forges send a UUID; the id is not signed)
//   a body already taken   -> 200, not parsed nor queued again: a replay is known by the
//                             digest of what was signed, whatever delivery id it carries
//   not JSON / fields gone -> 400
//   ping, other events, pushes to other branches, PR actions we do not act on -> 200, ignored
//   queue full             -> 503 (the sender retries; the delivery is not remembered)
//   otherwise              -> 202, queued for the daemon
// The body is never logged; the secret never leaves this object. Rejections are logged with the
// peer's address, at most one line per kind a second (reconciler/runtime/logging.h's
// LogThrottle), so a flood of bad requests cannot flood the log.
//
// Thread-safe; Start() and the destructor from one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "reconciler/clients/forge/forge_dialect.h"
#include "reconciler/clients/http/http_server.h"
#include "reconciler/features/webhooks/webhook_queue.h"
#include "reconciler/runtime/logging.h"
#include "reconciler/runtime/metrics.h"

namespace tr::reconciler::webhooks {

struct WebhookReceiverOptions {
  std::string listen;  // host:port; port 0 picks a free port (see port())
  std::string secret;  // shared with the forge: HMAC key (GitHub, Gitea) or token (GitLab)
  std::string branch;  // the watched branch
  http::ServerLimits limits = DefaultWebhookLimits();
  size_t remembered_deliveries = 10000;  // digests of the bodies taken (64 bytes each)

  // A forge sends one small delivery at a time per hook: 1 MiB bodies (GitHub's can be larger,
  // the events we act on never are), 16 MiB of bodies at once, 4 MiB of them from one address;
  // the connection cap derived from the memory limit (http::ConnectionCapFor), 64 from one
  // address (behind an Ingress, every delivery comes from the controller's).
  static http::ServerLimits DefaultWebhookLimits();
};

class WebhookReceiver {
 public:
  // Binds `options.listen` and serves on a thread of its own until destroyed. Verified,
  // relevant deliveries go to `queue`; counters to `metrics`. Both must outlive the receiver.
  // InvalidArgument for a malformed address or empty secret, Unavailable when it cannot bind.
  static absl::StatusOr<std::unique_ptr<WebhookReceiver>> Start(WebhookReceiverOptions options,
                                                                WebhookQueue& queue,
                                                                Metrics& metrics, Env& env);
  ~WebhookReceiver() = default;
  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  int port() const { return port_; }

 private:
  WebhookReceiver(WebhookReceiverOptions options, WebhookQueue& queue, Metrics& metrics, Env& env);
  std::vector<http::Route> Routes();
  // Everything after the body is read: signature, parsing, relevance, replay, queueing.
  http::Response Handle(const forge::ForgeDialect& dialect, const forge::WebhookHeaders& headers,
                        const std::string& body, const std::string& peer);

  // 200 for a body already taken, counted and logged once.
  http::Response Duplicate(std::string_view sender, const std::string& delivery,
                           const std::string& peer);
  // Forges send a UUID (36 bytes); the id is not signed, so nothing longer is kept or logged.
  static constexpr size_t kMaxDeliveryId = 128;

  const WebhookReceiverOptions options_;
  WebhookQueue& queue_;
  Metrics& metrics_;
  DeliveryMemory deliveries_;
  LogThrottle rejection_lines_;  // a line per kind of rejection a second, with the peer
  std::unique_ptr<http::HttpServer> server_;  // last: stopped before the rest goes
  int port_ = 0;
};

}  // namespace tr::reconciler::webhooks
