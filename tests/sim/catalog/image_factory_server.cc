#include "tests/sim/catalog/image_factory_server.h"

#include <httplib.h>

#include "core/version.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tests/sim/common/http_listener.h"
#include "tests/sim/common/mailbox.h"

namespace tr::sim {
namespace {

using nlohmann::json;

// The factory's http.Error: the message and a newline, as text/plain.
void ReplyText(httplib::Response& res, int code, const std::string& message) {
  res.status = code;
  res.set_content(message + "\n", "text/plain; charset=utf-8");
}

void ReplyJson(httplib::Response& res, int code, const json& body) {
  res.status = code;
  res.set_content(body.dump() + "\n", "application/json");
}

}  // namespace

absl::StatusOr<std::unique_ptr<ImageFactoryServer>> ImageFactoryServer::Start(
    std::shared_ptr<ImageFactory> factory, std::shared_ptr<Scheduler> scheduler,
    double time_scale) {
  std::unique_ptr<ImageFactoryServer> s(new ImageFactoryServer());
  s->factory_ = std::move(factory);
  s->scheduler_ = std::move(scheduler);
  s->time_scale_ = time_scale;
  s->server_ = std::make_unique<httplib::Server>();
  // Hanging requests hold a thread each; enough for a few clients to time out side by side.
  s->server_->new_task_queue = [] { return new httplib::ThreadPool(8); };
  s->server_->set_tcp_nodelay(true);  // Image Factory is a Go server: TCP_NODELAY, as Go's
  s->Routes();
  const int port = s->server_->bind_to_any_port("127.0.0.1");
  if (port <= 0) return absl::UnavailableError("image factory: cannot bind 127.0.0.1");
  s->url_ = fmt::format("http://127.0.0.1:{}", port);
  s->factory_->set_url(s->url_);
  s->thread_ = ListenInBackground(s->server_.get());
  return s;
}

ImageFactoryServer::~ImageFactoryServer() { Stop(); }

void ImageFactoryServer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

FactoryFaults ImageFactoryServer::faults() const {
  std::lock_guard lock(mu_);
  return faults_;
}

void ImageFactoryServer::set_faults(FactoryFaults faults) {
  {
    std::lock_guard lock(mu_);
    faults_ = faults;
  }
  cv_.notify_all();
}

int ImageFactoryServer::held_requests() const {
  std::lock_guard lock(mu_);
  return held_;
}

bool ImageFactoryServer::WaitUntilHeld(int count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return held_ >= count; });
}

bool ImageFactoryServer::HoldOrFail() {
  std::unique_lock lock(mu_);
  if (faults_.hang && !stopping_) {
    ++held_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !faults_.hang || stopping_; });
    --held_;
  }
  if (faults_.internal_error) return true;
  const auto delay = faults_.delay;
  if (delay.count() <= 0) return false;
  auto box = std::make_shared<Mailbox<bool>>();
  // Scheduled before it counts as held, so a clock moved after WaitUntilHeld sees it.
  scheduler_->After(std::chrono::duration_cast<Scheduler::Duration>(delay * time_scale_),
                    [box] { box->Close(); });
  ++held_;
  cv_.notify_all();
  lock.unlock();
  // The scheduler drops tasks once stopped: stop waiting with the server.
  while (!box->Done()) {
    if (box->Pop(std::chrono::milliseconds(50))) continue;
    std::lock_guard again(mu_);
    if (stopping_) break;
  }
  lock.lock();
  --held_;
  return false;
}

void ImageFactoryServer::Routes() {
  httplib::Server& s = *server_;
  s.set_pre_routing_handler([this](const httplib::Request&, httplib::Response& res) {
    if (!HoldOrFail()) return httplib::Server::HandlerResponse::Unhandled;
    ReplyText(res, 500, "internal server error");
    return httplib::Server::HandlerResponse::Handled;
  });
  s.Post("/schematics", [this](const httplib::Request& req, httplib::Response& res) {
    auto schematic = ParseSchematic(req.body);
    if (!schematic.ok()) return ReplyText(res, 400, std::string(schematic.status().message()));
    const std::string id = factory_->Register(*schematic);
    ReplyJson(res, 201, {{"id", id}, {"schematic", CanonicalSchematicYaml(*schematic)}});
  });
  s.Get("/versions", [this](const httplib::Request& req, httplib::Response& res) {
    // Only the exact value "true" asks for the broken list (internal/frontend/http/meta.go).
    const bool broken = req.get_param_value("broken") == "true";
    if (broken) factory_->CountBrokenRead();
    ReplyJson(res, 200, broken ? factory_->BrokenVersions() : factory_->Versions());
  });
  s.Get("/version/([^/]+)/extensions/official",
        [this](const httplib::Request& req, httplib::Response& res) {
          std::string tag = req.matches[1].str();
          if (!tag.starts_with("v")) tag = "v" + tag;
          // The factory parses the version first; a parse error is an untagged error: 500.
          if (!core::ParseTalosVersion(tag).ok()) {
            return ReplyText(res, 500, "internal server error");
          }
          auto extensions = factory_->OfficialExtensions(tag);
          if (!extensions.ok()) {
            return ReplyText(res, 404, std::string(extensions.status().message()));
          }
          json out = json::array();
          for (const auto& e : *extensions) {
            out.push_back({{"name", e.name},
                           {"ref", e.ref},
                           {"digest", e.digest},
                           {"author", e.author},
                           {"description", e.description}});
          }
          ReplyJson(res, 200, out);
        });
}

}  // namespace tr::sim
