// Test support: a machine whose API hangs. A TCP listener on a loopback address that accepts
// every connection (the kernel completes the handshake, a thread takes it off the queue) and
// never sends a byte; connections stay open until the Blackhole is destroyed.
//
// Thread-safe: accepted() and WaitAccepted() may be called from any thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/wait.h"

namespace tr::test_support {

class Blackhole {
 public:
  // Listens on `host` (127.0.0.0/8), port 0.
  explicit Blackhole(const std::string& host) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    ::inet_pton(AF_INET, host.c_str(), &address.sin_addr);
    ok_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
          ::listen(fd_, 256) == 0;
    socklen_t length = sizeof(address);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      for (int client; (client = ::accept(fd_, nullptr, nullptr)) >= 0;) {
        clients_.push_back(client);
        accepted_.Change([](int& n) { ++n; });
      }
    });
  }
  ~Blackhole() {
    ::shutdown(fd_, SHUT_RDWR);  // ends accept()
    thread_.join();
    ::close(fd_);
    for (int client : clients_) ::close(client);
  }
  Blackhole(const Blackhole&) = delete;
  Blackhole& operator=(const Blackhole&) = delete;

  bool ok() const { return ok_; }
  int port() const { return port_; }
  // Connections accepted so far.
  int accepted() const { return accepted_.Get(); }
  // True once `n` connections were accepted, false when `within` passes first.
  bool WaitAccepted(int n, std::chrono::milliseconds within = std::chrono::seconds(30)) const {
    return accepted_.WaitFor([n](int accepted) { return accepted >= n; }, within);
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  bool ok_ = false;
  Watched<int> accepted_;
  std::vector<int> clients_;  // the accept thread's until it is joined
  std::thread thread_;
};

}  // namespace tr::test_support
