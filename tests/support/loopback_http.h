// Test support for HTTP on loopback: a cpp-httplib server of the test's own on 127.0.0.1,
// and a port that was free a moment ago for servers that must be told their port (a child
// process such as Prometheus or docker-registry; start it again on another port when taken).
//
// Thread-safety: a LoopbackServer serves on its own thread; construct and destroy it on one.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gitsource/subprocess.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/support/http_listen.h"
#include "tests/support/wait.h"

namespace tr::test_support {

// A server of ours on 127.0.0.1 (or another loopback address, `host`: a second "host" for
// tests of what goes where), listening on its own thread until destroyed.
class LoopbackServer {
 public:
  explicit LoopbackServer(std::unique_ptr<httplib::Server> server,
                          const std::string& host = "127.0.0.1")
      : server_(std::move(server)) {
    port_ = server_->bind_to_any_port(host);
    thread_ = ListenAfterBind(*server_);
  }
  ~LoopbackServer() {
    server_->stop();
    thread_.join();
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;
  int port() const { return port_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::thread thread_;
};

// A loopback port nobody listened on when asked (the kernel's pick for port 0).
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), len);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// Starts `argv`, a server told to listen on 127.0.0.1:`port`, and waits up to `within` until
// GET `ready_path` there answers 200. nullopt when it did not start, did not get ready, or
// exited first (the port was taken meanwhile: try again with another FreePort()).
inline std::optional<gitsource::Subprocess> StartServerProcess(std::vector<std::string> argv,
                                                               int port,
                                                               const std::string& ready_path,
                                                               std::chrono::milliseconds within) {
  gitsource::SpawnOptions options;
  options.argv = std::move(argv);
  auto child = gitsource::Subprocess::Spawn(options);
  if (!child.ok()) return std::nullopt;
  httplib::Client client("127.0.0.1", port);
  bool exited = false;
  const bool ready = WaitUntil(
      [&] {
        exited = child->WaitFor(std::chrono::milliseconds(20)).has_value();
        if (exited) return true;
        const auto res = client.Get(ready_path);
        return res && res->status == 200;
      },
      within);
  if (!ready || exited) return std::nullopt;
  return *std::move(child);
}

}  // namespace tr::test_support
