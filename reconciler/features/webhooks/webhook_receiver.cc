#include "reconciler/features/webhooks/webhook_receiver.h"

#include "base/hmac.h"
#include "reconciler/features/webhooks/webhook_parse.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::webhooks {

using forge::ForgeDialect;
using forge::WebhookEvent;
using forge::WebhookHeaders;

namespace {

// The request's headers as a dialect reads them.
forge::HeaderLookup HeadersOf(const http::Request& req) {
  return [&req](std::string_view name) -> std::optional<std::string> {
    if (!req.HasHeader(name)) return std::nullopt;
    return req.Header(name);
  };
}

http::Response Answer(int status, const char* text) {
  return {status, "text/plain", std::string(text) + "\n"};
}

}  // namespace

http::ServerLimits WebhookReceiverOptions::DefaultWebhookLimits() {
  http::ServerLimits limits;
  limits.max_connections_per_peer = 64;
  limits.max_body_bytes = size_t{1} << 20;
  limits.max_bodies_in_flight_bytes = size_t{16} << 20;
  return limits;
}

WebhookReceiver::WebhookReceiver(WebhookReceiverOptions options, WebhookQueue& queue,
                                 Metrics& metrics, Env& env)
    : options_(std::move(options)),
      queue_(queue),
      metrics_(metrics),
      deliveries_(options_.remembered_deliveries),
      rejection_lines_(std::chrono::seconds(1), env) {}

absl::StatusOr<std::unique_ptr<WebhookReceiver>> WebhookReceiver::Start(
    WebhookReceiverOptions options, WebhookQueue& queue, Metrics& metrics, Env& env) {
  if (options.secret.empty()) return absl::InvalidArgumentError("webhook secret is empty");
  if (auto address = http::SplitListenAddress(options.listen); !address.ok()) {
    return absl::InvalidArgumentError("webhook " + std::string(address.status().message()));
  }
  std::unique_ptr<WebhookReceiver> receiver(
      new WebhookReceiver(std::move(options), queue, metrics, env));
  http::ServerOptions server;
  server.name = "webhook";
  server.listen = receiver->options_.listen;
  server.limits = receiver->options_.limits;
  server.routes = receiver->Routes();
  server.on_refused = [&metrics](http::RefusalReason reason) {
    metrics.webhook_requests.Inc(http::RefusalReasonName(reason));
  };
  auto started = http::HttpServer::Start(std::move(server), env);
  if (!started.ok()) return started.status();
  receiver->server_ = *std::move(started);
  receiver->port_ = receiver->server_->port();
  return receiver;
}

std::vector<http::Route> WebhookReceiver::Routes() {
  std::vector<http::Route> routes;
  for (const ForgeDialect* dialect : forge::AllDialects()) {
    routes.push_back({"POST", "/hooks/" + std::string(dialect->name()),
                      [this, dialect](const http::Request& req) {
                        return Handle(*dialect, dialect->PickHeaders(HeadersOf(req)), req.body,
                                      req.peer);
                      }});
  }
  return routes;
}

http::Response WebhookReceiver::Duplicate(std::string_view sender, const std::string& delivery,
                                          const std::string& peer) {
  static const auto log = ModuleLogger("webhook");
  metrics_.webhook_requests.Inc("duplicate");
  // A captured delivery can be replayed at will: throttled like a rejection.
  if (auto held_back = rejection_lines_.Admit("duplicate")) {
    log->info("step=receive forge={} peer={} delivery={} outcome=duplicate suppressed={}", sender,
              LogValue(peer), LogValue(delivery), *held_back);
  }
  return Answer(200, "duplicate delivery");
}

http::Response WebhookReceiver::Handle(const ForgeDialect& dialect, const WebhookHeaders& headers,
                                       const std::string& body, const std::string& peer) {
  static const auto log = ModuleLogger("webhook");
  const std::string_view sender = dialect.name();
  if (absl::Status s = dialect.VerifySignature(options_.secret, headers, body); !s.ok()) {
    metrics_.webhook_requests.Inc("bad_signature");
    if (auto held_back = rejection_lines_.Admit("bad_signature")) {
      log->warn("step=verify forge={} peer={} outcome=rejected reason={} suppressed={}", sender,
                LogValue(peer), LogValue(std::string(s.message())), *held_back);
    }
    return Answer(401, "bad signature");
  }
  if (headers.delivery.size() > kMaxDeliveryId) {
    metrics_.webhook_requests.Inc("malformed");
    if (auto held_back = rejection_lines_.Admit("delivery_id")) {
      log->warn(
          "step=parse forge={} peer={} outcome=rejected reason=\"delivery id over {} bytes\" "
          "suppressed={}",
          sender, LogValue(peer), kMaxDeliveryId, *held_back);
    }
    return Answer(400, "delivery id too long");
  }
  // The id is not signed, the body is: a replay under any id is the same body.
  const std::string digest = HmacSha256Hex("delivery", body);
  if (deliveries_.Seen(digest)) return Duplicate(sender, headers.delivery, peer);
  absl::StatusOr<WebhookEvent> event = ParseWebhook(dialect, headers, body);
  if (!event.ok()) {
    if (auto held_back = rejection_lines_.Admit("malformed")) {
      log->warn("step=parse forge={} peer={} outcome=rejected reason={} suppressed={}", sender,
                LogValue(peer), LogValue(std::string(event.status().message())), *held_back);
    }
    metrics_.webhook_requests.Inc("malformed");
    return Answer(400, "malformed payload");
  }
  if (!IsRelevant(*event, options_.branch)) {
    metrics_.webhook_requests.Inc("ignored");
    log->debug("step=receive forge={} event={} delivery={} outcome=ignored", sender,
               LogValue(event->event), LogValue(event->delivery));
    return Answer(200, "ignored");
  }
  const std::string delivery = event->delivery;
  if (!deliveries_.Remember(digest)) return Duplicate(sender, delivery, peer);
  if (!queue_.TryPush(*std::move(event))) {
    deliveries_.Forget(digest);
    metrics_.webhook_requests.Inc("queue_full");
    if (auto held_back = rejection_lines_.Admit("queue_full")) {
      log->warn("step=receive forge={} peer={} delivery={} outcome=queue-full suppressed={}",
                sender, LogValue(peer), LogValue(delivery), *held_back);
    }
    return Answer(503, "busy, retry later");
  }
  metrics_.webhook_requests.Inc("accepted");
  log->info("step=receive forge={} delivery={} outcome=queued", sender, LogValue(delivery));
  return Answer(202, "queued");
}

}  // namespace tr::reconciler::webhooks
