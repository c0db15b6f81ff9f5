#include "reconciler/webhooks/webhook_receiver.h"

#include "reconciler/logging.h"

namespace tr::reconciler::webhooks {

using forge::Forge;
using forge::ForgeName;
using forge::IsRelevant;
using forge::ParseWebhook;
using forge::VerifyWebhookSignature;
using forge::WebhookEvent;
using forge::WebhookHeaders;

namespace {

std::string FirstHeader(const http::Request& req, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (req.HasHeader(name)) return req.Header(name);
  }
  return "";
}

WebhookHeaders PickHeaders(Forge forge, const http::Request& req) {
  WebhookHeaders h;
  switch (forge) {
    case Forge::kGithub:
      h.event = FirstHeader(req, {"X-GitHub-Event"});
      h.delivery = FirstHeader(req, {"X-GitHub-Delivery"});
      h.signature = FirstHeader(req, {"X-Hub-Signature-256"});
      break;
    case Forge::kGitlab:
      h.event = FirstHeader(req, {"X-Gitlab-Event"});
      h.delivery = FirstHeader(req, {"X-Gitlab-Event-UUID"});
      h.token = FirstHeader(req, {"X-Gitlab-Token"});
      break;
    case Forge::kGitea:
      h.event = FirstHeader(req, {"X-Gitea-Event", "X-Forgejo-Event", "X-Gogs-Event"});
      h.delivery = FirstHeader(req, {"X-Gitea-Delivery", "X-Forgejo-Delivery", "X-Gogs-Delivery"});
      h.signature =
          FirstHeader(req, {"X-Gitea-Signature", "X-Forgejo-Signature", "X-Hub-Signature-256"});
      break;
    case Forge::kGeneric:
      h.event = "push";
      h.delivery = FirstHeader(req, {"X-Delivery-Id"});
      h.signature = FirstHeader(req, {"X-Signature-256"});
      break;
  }
  return h;
}

http::Response Answer(int status, const char* text) {
  return {status, "text/plain", std::string(text) + "\n"};
}

}  // namespace

http::ServerLimits WebhookReceiverOptions::DefaultWebhookLimits() {
  http::ServerLimits limits;
  limits.max_connections = 1024;
  limits.max_connections_per_peer = 64;
  limits.max_body_bytes = size_t{1} << 20;
  limits.max_bodies_in_flight_bytes = size_t{16} << 20;
  return limits;
}

WebhookReceiver::WebhookReceiver(WebhookReceiverOptions options, WebhookQueue& queue,
                                 Metrics& metrics)
    : options_(std::move(options)),
      queue_(queue),
      metrics_(metrics),
      deliveries_(options_.remembered_deliveries) {}

absl::StatusOr<std::unique_ptr<WebhookReceiver>> WebhookReceiver::Start(
    WebhookReceiverOptions options, WebhookQueue& queue, Metrics& metrics) {
  if (options.secret.empty()) return absl::InvalidArgumentError("webhook secret is empty");
  if (auto address = http::SplitListenAddress(options.listen); !address.ok()) {
    return absl::InvalidArgumentError("webhook " + std::string(address.status().message()));
  }
  std::unique_ptr<WebhookReceiver> receiver(
      new WebhookReceiver(std::move(options), queue, metrics));
  http::ServerOptions server;
  server.name = "webhook";
  server.listen = receiver->options_.listen;
  server.limits = receiver->options_.limits;
  server.routes = receiver->Routes();
  server.on_refused = [&metrics](http::RefusalReason reason) {
    metrics.webhook_requests.Inc(http::RefusalReasonName(reason));
  };
  auto started = http::HttpServer::Start(std::move(server));
  if (!started.ok()) return started.status();
  receiver->server_ = *std::move(started);
  receiver->port_ = receiver->server_->port();
  return receiver;
}

std::vector<http::Route> WebhookReceiver::Routes() {
  std::vector<http::Route> routes;
  for (Forge forge : {Forge::kGithub, Forge::kGitlab, Forge::kGitea, Forge::kGeneric}) {
    routes.push_back({"POST", std::string("/hooks/") + ForgeName(forge),
                      [this, forge](const http::Request& req) {
                        return Handle(forge, PickHeaders(forge, req), req.body);
                      }});
  }
  return routes;
}

http::Response WebhookReceiver::Handle(Forge forge, const WebhookHeaders& headers,
                                       const std::string& body) {
  static const auto log = ModuleLogger("webhook");
  if (absl::Status s = VerifyWebhookSignature(forge, options_.secret, headers, body); !s.ok()) {
    metrics_.webhook_requests.Inc("bad_signature");
    log->warn("step=verify forge={} outcome=rejected reason={}", ForgeName(forge),
              LogValue(std::string(s.message())));
    return Answer(401, "bad signature");
  }
  absl::StatusOr<WebhookEvent> event = ParseWebhook(forge, headers, body);
  if (!event.ok()) {
    log->warn("step=parse forge={} outcome=rejected reason={}", ForgeName(forge),
              LogValue(std::string(event.status().message())));
    metrics_.webhook_requests.Inc("malformed");
    return Answer(400, "malformed payload");
  }
  if (!IsRelevant(*event, options_.branch)) {
    metrics_.webhook_requests.Inc("ignored");
    log->debug("step=receive forge={} event={} delivery={} outcome=ignored", ForgeName(forge),
               LogValue(event->event), LogValue(event->delivery));
    return Answer(200, "ignored");
  }
  const std::string delivery = event->delivery;
  if (!deliveries_.Remember(delivery)) {
    metrics_.webhook_requests.Inc("duplicate");
    log->info("step=receive forge={} delivery={} outcome=duplicate", ForgeName(forge),
              LogValue(delivery));
    return Answer(200, "duplicate delivery");
  }
  if (!queue_.TryPush(*std::move(event))) {
    deliveries_.Forget(delivery);
    metrics_.webhook_requests.Inc("queue_full");
    log->warn("step=receive forge={} delivery={} outcome=queue-full", ForgeName(forge),
              LogValue(delivery));
    return Answer(503, "busy, retry later");
  }
  metrics_.webhook_requests.Inc("accepted");
  log->info("step=receive forge={} delivery={} outcome=queued", ForgeName(forge),
            LogValue(delivery));
  return Answer(202, "queued");
}

}  // namespace tr::reconciler::webhooks
