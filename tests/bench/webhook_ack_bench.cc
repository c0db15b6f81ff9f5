// Benchmark of the webhook listener: signed GitHub push deliveries to /hooks/github at a fixed
// offered rate (default 1,000 a second) from several client threads, each request on a new
// connection as forges send them, while a consumer drains the queue like the daemon does.
// Prints the acknowledgement latency (p50, p99, max) and the answers by status.
//
// Usage: webhook_ack_bench [--rate N] [--seconds N] [--clients N]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/hmac.h"
#include "fmt/format.h"
#include "httplib.h"
#include "reconciler/features/webhooks/webhook_receiver.h"
#include "reconciler/runtime/logging.h"
#include "tests/bench/bench_row.h"

namespace tr::reconciler::webhooks {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int rate = 1000;
  int seconds = 5;
  int clients = 8;
};

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--rate") o.rate = value;
    if (flag == "--seconds") o.seconds = value;
    if (flag == "--clients") o.clients = value;
  }
  return o;
}

double Percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * sorted.size()))];
}

int Run(const Options& o) {
  ConfigureLogging("warn");  // a line per delivery would measure the terminal
  Metrics metrics;
  WebhookQueue queue(256);
  WebhookReceiverOptions options;
  options.listen = "127.0.0.1:0";
  options.secret = "bench-secret";
  options.branch = "main";
  auto receiver = WebhookReceiver::Start(options, queue, metrics, Env::Default());
  if (!receiver.ok()) {
    std::fprintf(stderr, "%s\n", std::string(receiver.status().message()).c_str());
    return 1;
  }
  std::jthread consumer([&](std::stop_token stop) {
    while (queue.Pop(stop)) {
    }
  });
  const int port = (*receiver)->port();
  const int total = o.rate * o.seconds;
  const auto interval = std::chrono::nanoseconds(1'000'000'000LL * o.clients / o.rate);
  std::mutex mu;
  std::vector<double> latencies_ms;
  std::map<int, int> statuses;
  std::atomic<int> next{0};
  const auto start = Clock::now();
  std::vector<std::jthread> clients;
  for (int c = 0; c < o.clients; ++c) {
    clients.emplace_back([&, c] {
      auto due = start + interval * c / o.clients;
      for (int i = next++; i < total; i = next++) {
        std::this_thread::sleep_until(due);  // the offered rate, not a wait for a result
        due += interval;
        const std::string body = fmt::format(R"({{"ref":"refs/heads/main","after":"{:040}"}})", i);
        httplib::Client client("127.0.0.1", port);
        const auto sent = Clock::now();
        auto res =
            client.Post("/hooks/github",
                        {{"X-GitHub-Event", "push"},
                         {"X-GitHub-Delivery", fmt::format("bench-{}", i)},
                         {"X-Hub-Signature-256", "sha256=" + HmacSha256Hex("bench-secret", body)}},
                        body, "application/json");
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
        std::lock_guard lock(mu);
        latencies_ms.push_back(ms);
        ++statuses[res ? res->status : -1];
      }
    });
  }
  clients.clear();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  std::printf("deliveries %zu in %.2f s (offered %d/s, achieved %.0f/s, %d clients)\n",
              latencies_ms.size(), elapsed, o.rate, latencies_ms.size() / elapsed, o.clients);
  std::printf("ack latency p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", Percentile(latencies_ms, 0.50),
              Percentile(latencies_ms, 0.99), latencies_ms.empty() ? 0 : latencies_ms.back());
  for (const auto& [status, count] : statuses) std::printf("status %d: %d\n", status, count);
  bench::PrintBenchRow(fmt::format("webhook acknowledgement at {}/s, p50 / p99", o.rate), "",
                       fmt::format("{:.2f} / {:.2f} ms", Percentile(latencies_ms, 0.50),
                                   Percentile(latencies_ms, 0.99)),
                       std::nullopt);
  return 0;
}

}  // namespace
}  // namespace tr::reconciler::webhooks

int main(int argc, char** argv) {
  return tr::reconciler::webhooks::Run(tr::reconciler::webhooks::ParseArgs(argc, argv));
}
