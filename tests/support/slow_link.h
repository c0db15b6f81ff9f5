// Test support: a slow network path to a server. A TCP listener on a loopback address that
// relays each connection to `target`, but only after `delay`: the client's TCP connect succeeds
// at once and its first bytes (a TLS ClientHello) wait, as over a long or congested link.
//
// Thread-safe: accepted() may be read from any thread.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <list>
#include <mutex>
#include <string>
#include <thread>

namespace tr::test_support {

class SlowLink {
 public:
  // Listens on `host` (127.0.0.0/8), port 0; relays to target_host:target_port after `delay`.
  SlowLink(const std::string& host, std::string target_host, int target_port,
           std::chrono::milliseconds delay)
      : target_host_(std::move(target_host)), target_port_(target_port), delay_(delay) {
    ok_ = ::pipe2(stop_, O_CLOEXEC) == 0;
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = Address(host, 0);
    ok_ = ok_ && ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
          ::listen(fd_, 64) == 0;
    socklen_t length = sizeof(address);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] {
      for (int client; (client = ::accept(fd_, nullptr, nullptr)) >= 0;) {
        ++accepted_;
        std::lock_guard lock(mu_);
        relays_.emplace_back([this, client] { Relay(client); });
      }
    });
  }
  ~SlowLink() {
    ::close(stop_[1]);           // wakes every relay
    ::shutdown(fd_, SHUT_RDWR);  // ends accept()
    acceptor_.join();
    for (auto& relay : relays_) relay.join();
    ::close(fd_);
    ::close(stop_[0]);
  }
  SlowLink(const SlowLink&) = delete;
  SlowLink& operator=(const SlowLink&) = delete;

  bool ok() const { return ok_; }
  int port() const { return port_; }
  int accepted() const { return accepted_; }

 private:
  static sockaddr_in Address(const std::string& host, int port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, host.c_str(), &address.sin_addr);
    return address;
  }

  // Copies one read from `from` to `to`; false when the connection is over.
  static bool Forward(int from, int to) {
    char buffer[16384];
    const ssize_t n = ::read(from, buffer, sizeof(buffer));
    for (ssize_t sent = 0; n > 0 && sent < n;) {
      const ssize_t w = ::write(to, buffer + sent, static_cast<size_t>(n - sent));
      if (w <= 0) return false;
      sent += w;
    }
    return n > 0;
  }

  void Relay(int client) {
    // The delay, cut short only by the destructor (the stop pipe closing).
    pollfd stop{stop_[0], POLLIN, 0};
    const bool stopping = ::poll(&stop, 1, static_cast<int>(delay_.count())) != 0;
    const int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in target = Address(target_host_, target_port_);
    if (!stopping &&
        ::connect(upstream, reinterpret_cast<sockaddr*>(&target), sizeof(target)) == 0) {
      pollfd fds[3] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      bool open = true;
      while (open && ::poll(fds, 3, -1) > 0 && fds[2].revents == 0) {
        if (fds[0].revents != 0) open = Forward(client, upstream);
        if (open && fds[1].revents != 0) open = Forward(upstream, client);
      }
    }
    ::close(upstream);
    ::close(client);
  }

  std::string target_host_;
  int target_port_;
  std::chrono::milliseconds delay_;
  int fd_ = -1;
  int stop_[2] = {-1, -1};
  int port_ = 0;
  bool ok_ = false;
  std::atomic<int> accepted_{0};
  std::mutex mu_;
  std::list<std::thread> relays_;
  std::thread acceptor_;
};

}  // namespace tr::test_support
