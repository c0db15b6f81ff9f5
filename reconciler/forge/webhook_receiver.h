// The inbound webhook listener (`--webhook-listen`): `POST /hooks/github`, `/hooks/gitlab`,
// `/hooks/gitea` and `/hooks/generic` (any other Git server: a hook script signs the body), on
// an address of its own so only it needs to be exposed to the forge.
//
// Per delivery, answered within the read/write timeouts and never after doing the work:
//   body over the cap      -> 413 as soon as the declared length or the bytes read pass the
//                             cap (the rest is not read; the connection is closed)
//   missing/bad signature  -> 401 and talos_reconciler_webhook_bad_signatures_total
//   not JSON / fields gone -> 400
//   ping, other events, pushes to other branches, PR actions we do not act on -> 200, ignored
//   a delivery id already taken -> 200, not queued again
//   queue full             -> 503 (the sender retries; the delivery is not remembered)
//   otherwise              -> 202, queued for the daemon
// The body is never logged; the secret never leaves this object.
//
// Thread-safe; Start() and the destructor from one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "reconciler/forge/webhook_queue.h"
#include "reconciler/metrics.h"

namespace httplib {
class Server;
struct Response;
}

namespace tr::reconciler::forge {

struct WebhookReceiverOptions {
  std::string listen;  // host:port; port 0 picks a free port (see port())
  std::string secret;  // shared with the forge: HMAC key (GitHub, Gitea) or token (GitLab)
  std::string branch;  // the watched branch
  size_t max_body_bytes = size_t{1} << 20;
  std::chrono::seconds read_timeout{5};  // per read, headers included
  std::chrono::seconds write_timeout{5};
  size_t remembered_deliveries = 10000;
  int threads = 8;
};

class WebhookReceiver {
 public:
  // Binds `options.listen` and serves on a thread of its own until destroyed. Verified,
  // relevant deliveries go to `queue`; counters to `metrics`. Both must outlive the receiver.
  // InvalidArgument for a malformed address or empty secret, Unavailable when it cannot bind.
  static absl::StatusOr<std::unique_ptr<WebhookReceiver>> Start(WebhookReceiverOptions options,
                                                                WebhookQueue& queue,
                                                                Metrics& metrics);
  ~WebhookReceiver();
  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  int port() const { return port_; }

 private:
  WebhookReceiver(WebhookReceiverOptions options, WebhookQueue& queue, Metrics& metrics);
  void Route();
  // Everything after the body is read: signature, parsing, relevance, replay, queueing.
  void Handle(Forge forge, const WebhookHeaders& headers, const std::string& body,
              httplib::Response& res);

  const WebhookReceiverOptions options_;
  WebhookQueue& queue_;
  Metrics& metrics_;
  DeliveryMemory deliveries_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::atomic<bool> listen_returned_{false};
  std::jthread thread_;
};

}  // namespace tr::reconciler::forge
