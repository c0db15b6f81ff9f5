// A notification receiver for the tests of tests/forge: a real HTTP server on loopback that
// records every POST to /hook and answers with the status its function gives for that attempt.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "httplib.h"

namespace tr::forge_test {

struct Received {
  std::string body;
  std::string delivery;
  std::string timestamp;
  std::string signature;
  std::string event;
};

// A real HTTP receiver on loopback that answers with `status_for(attempt number)`.
class Receiver {
 public:
  explicit Receiver(std::function<int(int)> status_for) : status_for_(std::move(status_for)) {
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      received_.push_back({req.body, req.get_header_value("X-Talos-Reconciler-Delivery"),
                           req.get_header_value("X-Talos-Reconciler-Timestamp"),
                           req.get_header_value("X-Talos-Reconciler-Signature"),
                           req.get_header_value("X-Talos-Reconciler-Event")});
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
