// A notification receiver for the tests of tests/forge: a real HTTP server on loopback that
// records every POST to /hook and answers with the status its function gives for that attempt.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "httplib.h"
#include "nlohmann/json.hpp"

namespace tr::forge_test {

// One POST as received: the body, the Standard Webhooks headers, and the body's "event".
struct Received {
  std::string body;
  std::string delivery;   // webhook-id
  std::string timestamp;  // webhook-timestamp
  std::string signature;  // webhook-signature
  std::string event;
};

// A real HTTP receiver on loopback that answers with `status_for(attempt number)`.
class Receiver {
 public:
  explicit Receiver(std::function<int(int)> status_for) : status_for_(std::move(status_for)) {
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
      received_.push_back({req.body, req.get_header_value("webhook-id"),
                           req.get_header_value("webhook-timestamp"),
                           req.get_header_value("webhook-signature"),
                           body.is_object() ? body.value("event", "") : ""});
      res.status = status_for_(static_cast<int>(received_.size()));
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::jthread([this] { server_.listen_after_bind(); });
  }
  ~Receiver() { server_.stop(); }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  std::vector<Received> Got() {
    std::lock_guard lock(mu_);
    return received_;
  }

 private:
  std::function<int(int)> status_for_;
  httplib::Server server_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<Received> received_;
  std::jthread thread_;
};

}  // namespace tr::forge_test
