// What an idle connection costs the listener (issue 49, finding 7): opens N connections to a
// server with the daemon's limits (connection caps raised to N), from 64 loopback addresses,
// and prints the growth per connection of this process's resident memory, of the kernel's TCP
// buffers (/proc/net/sockstat) and of the kernel's slab (/proc/meminfo: the socket structures
// of both ends, machine-wide, so other work on the machine shows up in it; a container's
// memory limit charges the server's half), at three points: connected and silent; kept alive
// after one small request; kept alive after one request with 16 KiB of headers (a large
// cookie). The clients are bare sockets, so the resident growth is the server's.
//
// Usage: connection_cost_bench [--connections N]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "reconciler/clients/http/http_server.h"
#include "reconciler/runtime/logging.h"
#include "tests/bench/bench_row.h"
#include "tests/bench/loopback_socket.h"
#include "tests/support/process_memory.h"

namespace tr::reconciler::http {
namespace {

// A connection from `source` to the listener on 127.0.0.1.
int Connect(const std::string& source, int port) {
  return bench::ConnectFrom(source, "127.0.0.1", port);
}

// One answer of a kept connection (headers and a Content-Length body); false on a close.
bool ReadAnswer(int fd) {
  std::string in;
  char buf[4096];
  for (;;) {
    const size_t end = in.find("\r\n\r\n");
    if (end != std::string::npos) {
      const size_t at = in.find("Content-Length: ");
      const size_t length = at == std::string::npos ? 0 : std::stoul(in.substr(at + 16));
      if (in.size() >= end + 4 + length) return true;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10'000) <= 0) return false;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    in.append(buf, static_cast<size_t>(n));
  }
}

// Pages of memory the kernel's TCP sockets hold ("TCP: ... mem N"), in KiB.
long KernelTcpKib() {
  std::ifstream sockstat("/proc/net/sockstat");
  std::string line;
  while (std::getline(sockstat, line)) {
    if (!line.starts_with("TCP:")) continue;
    const size_t at = line.find(" mem ");
    if (at != std::string::npos) return std::stol(line.substr(at + 5)) * (::sysconf(_SC_PAGESIZE) / 1024);
  }
  return 0;
}

// The kernel's slab, machine-wide, in KiB.
long SlabKib() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.starts_with("Slab:")) return std::stol(line.substr(5));
  }
  return 0;
}

struct Point {
  long rss_kib;
  long kernel_kib;
  long slab_kib;
};
// Memory once the server's loop, on its own thread, holds `connections` (the requests sent
// before were answered, so nothing else is in flight); -1s when it does not within 30 s.
Point Measure(const HttpServer& server, std::size_t connections) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (server.OpenConnections() != connections) {
    if (std::chrono::steady_clock::now() > deadline) return {-1, -1, -1};
    std::this_thread::yield();
  }
  return {test_support::ResidentKib(), KernelTcpKib(), SlabKib()};
}

int Run(int count) {
  ConfigureLogging("warn");
  ServerOptions options;
  options.name = "bench";
  options.listen = "127.0.0.1:0";
  options.limits = ProbeEndpointLimits();
  options.limits.max_connections = static_cast<size_t>(count);
  options.limits.max_connections_per_peer = static_cast<size_t>(count);
  options.limits.request_deadline = std::chrono::minutes(5);
  options.limits.keep_alive_timeout = std::chrono::minutes(5);
  options.routes = {{"GET", "/healthz",
                     [](const Request&) { return Response{200, "text/plain", "ok\n"}; }}};
  auto server = HttpServer::Start(std::move(options), Env::Default());
  if (!server.ok()) return 1;
  const int port = (*server)->port();

  const Point base = Measure(**server, 0);
  std::vector<int> fds;
  for (int i = 0; i < count; ++i) {
    const int fd = Connect(fmt::format("127.0.1.{}", 1 + i % 64), port);
    if (fd < 0) break;
    fds.push_back(fd);
  }
  const Point idle = Measure(**server, fds.size());
  int answered = 0;
  for (int fd : fds) {
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0 && ReadAnswer(fd)) ++answered;
  }
  const Point kept = Measure(**server, fds.size());
  const std::string cookie = "Cookie: " + std::string((16 << 10) - 64, 'c') + "\r\n";
  for (int fd : fds) {
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n" + cookie + "\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0) ReadAnswer(fd);
  }
  const Point large = Measure(**server, fds.size());
  if (base.rss_kib < 0 || idle.rss_kib < 0 || kept.rss_kib < 0 || large.rss_kib < 0) {
    std::fprintf(stderr, "the server did not hold the %zu connections within 30 s\n", fds.size());
    return 1;
  }

  const double n = fds.empty() ? 1 : static_cast<double>(fds.size());
  auto per = [n](long grown) { return static_cast<double>(grown) / n; };
  std::printf("connections: %zu of %d, answered %d\n", fds.size(), count, answered);
  std::printf("%-38s %12s %12s %14s\n", "KiB per connection", "resident", "TCP buffers",
              "slab (2 ends)");
  auto row = [&](const char* what, const Point& at) {
    std::printf("%-38s %12.1f %12.1f %14.1f\n", what, per(at.rss_kib - base.rss_kib),
                per(at.kernel_kib - base.kernel_kib), per(at.slab_kib - base.slab_kib));
  };
  row("connected, silent", idle);
  row("kept alive after a small request", kept);
  row("kept alive after 16 KiB of headers", large);
  // What the server's container is charged: its resident memory, the TCP buffers, and its
  // half of the slab.
  auto charged = [&](const Point& at) {
    return per(at.rss_kib - base.rss_kib) + per(at.kernel_kib - base.kernel_kib) +
           per(at.slab_kib - base.slab_kib) / 2;
  };
  const double worst = std::max(charged(kept), charged(large));
  bench::PrintBenchRow(fmt::format("memory per idle connection, {} kept alive (resident + TCP "
                                   "buffers + half the slab)",
                                   fds.size()),
                       "≤ 8 KiB (http::kConnectionBaseBytes)", fmt::format("{:.1f} KiB", worst),
                       worst <= 8,
                       fmt::format("resident {:.1f} KiB silent, {:.1f} after 16 KiB of headers",
                                   per(idle.rss_kib - base.rss_kib),
                                   per(large.rss_kib - base.rss_kib)));
  for (int fd : fds) ::close(fd);
  return fds.size() == static_cast<size_t>(count) ? 0 : 1;
}

}  // namespace
}  // namespace tr::reconciler::http

int main(int argc, char** argv) {
  int count = 1024;
  if (argc == 3 && std::string(argv[1]) == "--connections") count = std::atoi(argv[2]);
  return tr::reconciler::http::Run(count);
}
