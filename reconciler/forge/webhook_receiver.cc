#include "reconciler/forge/webhook_receiver.h"

#include <charconv>

#include "httplib.h"
#include "reconciler/logging.h"

namespace tr::reconciler::forge {
namespace {

std::string FirstHeader(const httplib::Request& req, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (req.has_header(name)) return req.get_header_value(name);
  }
  return "";
}

WebhookHeaders PickHeaders(Forge forge, const httplib::Request& req) {
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

void Answer(httplib::Response& res, int status, const char* text) {
  res.status = status;
  res.set_content(std::string(text) + "\n", "text/plain");
}

// Reads the body up to `cap` bytes. nullopt with `too_large` set when the declared length or
// the bytes sent pass the cap; nullopt alone when the read failed (timeout, bad framing).
std::optional<std::string> ReadCapped(const httplib::Request& req,
                                      const httplib::ContentReader& reader, size_t cap,
                                      bool& too_large) {
  too_large = false;
  if (req.has_header("Content-Length")) {
    const std::string declared = req.get_header_value("Content-Length");
    uint64_t length = 0;
    auto [end, ec] = std::from_chars(declared.data(), declared.data() + declared.size(), length);
    if (ec != std::errc() || end != declared.data() + declared.size()) return std::nullopt;
    if (length > cap) {
      too_large = true;
      return std::nullopt;
    }
  }
  std::string body;
  const bool read = reader([&](const char* data, size_t n) {
    if (body.size() + n > cap) {
      too_large = true;
      return false;
    }
    body.append(data, n);
    return true;
  });
  if (!read || too_large) return std::nullopt;
  return body;
}

}  // namespace

WebhookReceiver::WebhookReceiver(WebhookReceiverOptions options, WebhookQueue& queue,
                                 Metrics& metrics)
    : options_(std::move(options)),
      queue_(queue),
      metrics_(metrics),
      deliveries_(options_.remembered_deliveries),
      server_(std::make_unique<httplib::Server>()) {}

WebhookReceiver::~WebhookReceiver() {
  if (thread_.joinable()) {
    // stop() only reaches a server that is already listening: wait for the thread to get there.
    while (!server_->is_running() && !listen_returned_) std::this_thread::yield();
    server_->stop();
    thread_.join();
  }
}

absl::StatusOr<std::unique_ptr<WebhookReceiver>> WebhookReceiver::Start(
    WebhookReceiverOptions options, WebhookQueue& queue, Metrics& metrics) {
  if (options.secret.empty()) return absl::InvalidArgumentError("webhook secret is empty");
  const size_t colon = options.listen.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    const std::string digits = options.listen.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size()) port = -1;
  }
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError("webhook listen address " + options.listen +
                                      ": want host:port");
  }
  const std::string host = options.listen.substr(0, colon);
  std::unique_ptr<WebhookReceiver> receiver(
      new WebhookReceiver(std::move(options), queue, metrics));
  receiver->Route();
  httplib::Server& server = *receiver->server_;
  const int bound = port == 0 ? server.bind_to_any_port(host.c_str())
                              : (server.bind_to_port(host.c_str(), port) ? port : -1);
  if (bound < 0) return absl::UnavailableError("cannot bind webhook listener " + host);
  receiver->port_ = bound;
  receiver->thread_ = std::jthread([&server, &done = receiver->listen_returned_] {
    server.listen_after_bind();
    done = true;
  });
  ModuleLogger("webhook")->info("step=listen address={}:{}", host, bound);
  return receiver;
}

void WebhookReceiver::Route() {
  httplib::Server& server = *server_;
  server.new_task_queue = [threads = options_.threads] {
    return new httplib::ThreadPool(static_cast<size_t>(threads));
  };
  server.set_read_timeout(options_.read_timeout);
  server.set_write_timeout(options_.write_timeout);
  // One request per connection: after a 413 the unread rest of the body must not be taken for
  // the next request, and forges open a connection per delivery anyway.
  server.set_keep_alive_max_count(1);
  for (Forge forge : {Forge::kGithub, Forge::kGitlab, Forge::kGitea, Forge::kGeneric}) {
    server.Post(std::string("/hooks/") + ForgeName(forge),
                [this, forge](const httplib::Request& req, httplib::Response& res,
                              const httplib::ContentReader& reader) {
                  ++metrics_.webhook_deliveries;
                  bool too_large = false;
                  std::optional<std::string> body =
                      ReadCapped(req, reader, options_.max_body_bytes, too_large);
                  if (too_large) {
                    ++metrics_.webhook_too_large;
                    return Answer(res, 413, "payload too large");
                  }
                  if (!body) return Answer(res, 400, "cannot read the body");
                  Handle(forge, PickHeaders(forge, req), *body, res);
                });
  }
}

}  // namespace tr::reconciler::forge

namespace tr::reconciler::forge {

void WebhookReceiver::Handle(Forge forge, const WebhookHeaders& headers, const std::string& body,
                             httplib::Response& res) {
  static const auto log = ModuleLogger("webhook");
  if (absl::Status s = VerifyWebhookSignature(forge, options_.secret, headers, body); !s.ok()) {
    ++metrics_.webhook_bad_signatures;
    log->warn("step=verify forge={} outcome=rejected reason={}", ForgeName(forge),
              LogValue(std::string(s.message())));
    return Answer(res, 401, "bad signature");
  }
  absl::StatusOr<WebhookEvent> event = ParseWebhook(forge, headers, body);
  if (!event.ok()) {
    log->warn("step=parse forge={} outcome=rejected reason={}", ForgeName(forge),
              LogValue(std::string(event.status().message())));
    return Answer(res, 400, "malformed payload");
  }
  if (!IsRelevant(*event, options_.branch)) {
    ++metrics_.webhook_ignored;
    log->debug("step=receive forge={} event={} delivery={} outcome=ignored", ForgeName(forge),
               LogValue(event->event), LogValue(event->delivery));
    return Answer(res, 200, "ignored");
  }
  const std::string delivery = event->delivery;
  if (!deliveries_.Remember(delivery)) {
    ++metrics_.webhook_duplicates;
    log->info("step=receive forge={} delivery={} outcome=duplicate", ForgeName(forge),
              LogValue(delivery));
    return Answer(res, 200, "duplicate delivery");
  }
  if (!queue_.TryPush(*std::move(event))) {
    deliveries_.Forget(delivery);
    ++metrics_.webhook_queue_full;
    log->warn("step=receive forge={} delivery={} outcome=queue-full", ForgeName(forge),
              LogValue(delivery));
    return Answer(res, 503, "busy, retry later");
  }
  ++metrics_.webhook_accepted;
  log->info("step=receive forge={} delivery={} outcome=queued", ForgeName(forge),
            LogValue(delivery));
  Answer(res, 202, "queued");
}

}  // namespace tr::reconciler::forge
