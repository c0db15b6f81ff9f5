// Benchmark of the listeners under the attacks of issue 23, with the daemon's limits: 200 idle
// and 50 slowloris connections (a header byte a second) spread over ten attacker addresses
// (127.0.0.2-11, 25 each: under the webhook's per-address cap, over the health listener's 16)
// on both the webhook listener and the health listener, then 8 connections sending endless header
// lines. Meanwhile an honest client on 127.0.0.1 sends signed deliveries and /healthz probes, each
// on a new connection. Prints their latencies (p50, p99, max) and the process's RSS growth from the
// endless headers.
//
// Usage: listener_load_bench [--probes N]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/hmac.h"
#include "fmt/format.h"
#include "httplib.h"
#include "reconciler/clients/http/http_server.h"
#include "reconciler/features/webhooks/webhook_receiver.h"
#include "reconciler/runtime/logging.h"
#include "tests/bench/bench_row.h"
#include "tests/bench/loopback_socket.h"
#include "tests/support/process_memory.h"

namespace tr::reconciler::webhooks {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kSecret[] = "bench-secret-of-enough-length";

// A connection from `source` to the listener on 127.0.0.1.
int Connect(const std::string& source, int port) {
  return bench::ConnectFrom(source, "127.0.0.1", port);
}

bool Send(int fd, const std::string& data) {
  return ::send(fd, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * sorted.size()))];
}

// 200 idle and 50 slowloris connections to `port` from ten addresses; the slow ones get a
// byte a second until `stop`.
std::jthread Attack(int port, std::vector<int>& fds) {
  std::vector<int> slow;
  for (int i = 0; i < 250; ++i) {
    const int fd = Connect(fmt::format("127.0.0.{}", 2 + i % 10), port);
    if (fd < 0) continue;
    fds.push_back(fd);
    if (i >= 200 && Send(fd, "POST /hooks/github HTTP/1.1\r\nHost: x\r\nX-A: ")) slow.push_back(fd);
  }
  return std::jthread([slow](std::stop_token stop) {
    std::mutex mu;
    std::condition_variable_any paced;
    std::unique_lock lock(mu);
    // A byte a second (the attack's pace) until stopped; the wait ends at once on a stop.
    while (!stop.stop_requested()) {
      for (int fd : slow) Send(fd, "a");
      paced.wait_for(lock, stop, std::chrono::seconds(1), [] { return false; });
    }
  });
}

// Each probe on a new connection, as forges and kubelets do; the latencies in ms, sorted.
std::vector<double> Probe(int count, int webhook_port, int health_port, bool webhook,
                          int& failures) {
  std::vector<double> ms;
  for (int i = 0; i < count; ++i) {
    const auto sent = Clock::now();
    bool ok = false;
    if (webhook) {
      httplib::Client client("127.0.0.1", webhook_port);
      const std::string body = fmt::format(R"({{"ref":"refs/heads/main","after":"{:040}"}})", i);
      auto res = client.Post("/hooks/github",
                             {{"X-GitHub-Event", "push"},
                              {"X-GitHub-Delivery", fmt::format("probe-{}", i)},
                              {"X-Hub-Signature-256", "sha256=" + HmacSha256Hex(kSecret, body)}},
                             body, "application/json");
      ok = res && res->status == 202;
    } else {
      httplib::Client client("127.0.0.1", health_port);
      auto res = client.Get("/healthz");
      ok = res && res->status == 200;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
    if (!ok && failures++ == 0)
      std::printf("first failure: %s probe %d\n", webhook ? "webhook" : "/healthz", i);
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

// 8 connections sending 8 KiB header lines until the server answers; the RSS growth in KiB.
long EndlessHeaders(int port) {
  const long before = test_support::ResidentKib();
  std::vector<std::jthread> attackers;
  for (int i = 0; i < 8; ++i) {
    attackers.emplace_back([port, i] {
      const int fd = Connect(fmt::format("127.0.0.{}", 20 + i), port);
      if (fd < 0) return;
      const std::string line = "X-Filler: " + std::string(8 << 10, 'a') + "\r\n";
      Send(fd, "POST /hooks/github HTTP/1.1\r\nHost: x\r\n");
      for (size_t sent = 0; sent < (size_t{128} << 20) && Send(fd, line); sent += line.size()) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 0) > 0) break;
      }
      ::close(fd);
    });
  }
  attackers.clear();
  return test_support::ResidentKib() - before;
}

int Run(int probes) {
  ConfigureLogging("warn");
  Metrics metrics;
  WebhookQueue queue(4096);
  WebhookReceiverOptions options;
  options.listen = "127.0.0.1:0";
  options.secret = kSecret;
  options.branch = "main";
  auto receiver = WebhookReceiver::Start(options, queue, metrics, Env::Default());
  http::ServerOptions health;
  health.name = "endpoints";
  health.listen = "127.0.0.1:0";
  health.limits = http::ProbeEndpointLimits();  // the daemon's
  health.routes = {{"GET", "/healthz", [](const http::Request&) {
                      return http::Response{200, "text/plain", "ok\n"};
                    }}};
  auto health_server = http::HttpServer::Start(std::move(health), Env::Default());
  if (!receiver.ok() || !health_server.ok()) return 1;
  std::jthread consumer([&](std::stop_token stop) {
    while (queue.Pop(stop)) {
    }
  });
  const int webhook_port = (*receiver)->port();
  const int health_port = (*health_server)->port();
  std::vector<int> fds;
  std::jthread on_webhook = Attack(webhook_port, fds);
  std::jthread on_health = Attack(health_port, fds);
  int failures = 0;
  const std::vector<double> hook = Probe(probes, webhook_port, health_port, true, failures);
  const std::vector<double> probe = Probe(probes, webhook_port, health_port, false, failures);
  const long grown_kib = EndlessHeaders(webhook_port);
  std::printf("attackers connected: %zu of 500; probe failures: %d\n", fds.size(), failures);
  std::printf("signed webhook p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", Percentile(hook, 0.5),
              Percentile(hook, 0.99), hook.empty() ? 0 : hook.back());
  std::printf("/healthz       p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", Percentile(probe, 0.5),
              Percentile(probe, 0.99), probe.empty() ? 0 : probe.back());
  std::printf("endless headers: RSS +%ld KiB; refused %llu\n", grown_kib,
              static_cast<unsigned long long>(metrics.webhook_requests.Value("headers_too_large")));
  bench::PrintBenchRow("signed webhook under 200 idle + 50 slowloris connections, p99", "≤ 1 s",
                       fmt::format("{:.1f} ms", Percentile(hook, 0.99)),
                       failures == 0 && Percentile(hook, 0.99) <= 1000);
  bench::PrintBenchRow("/healthz under 200 idle + 50 slowloris connections, p99", "≤ 100 ms",
                       fmt::format("{:.1f} ms", Percentile(probe, 0.99)),
                       failures == 0 && Percentile(probe, 0.99) <= 100);
  bench::PrintBenchRow("RSS growth from 8 connections sending endless headers", "< 64 MiB",
                       fmt::format("{:.1f} MiB", grown_kib / 1024.0), grown_kib < 64 * 1024);
  for (int fd : fds) ::close(fd);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tr::reconciler::webhooks

int main(int argc, char** argv) {
  int probes = 200;
  if (argc == 3 && std::string(argv[1]) == "--probes") probes = std::atoi(argv[2]);
  return tr::reconciler::webhooks::Run(probes);
}
