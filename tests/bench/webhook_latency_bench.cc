// Benchmark: from a push webhook's receipt to the reconciler's first Talos API call. The real
// talos-reconciler daemon (repository poll interval one hour, so only the webhook can make it
// look) watches a git daemon on loopback and a 2-node talos-sim cluster. Each round commits a
// profile change, then POSTs a signed GitHub push delivery to /hooks/github and measures until
// the simulator's journal shows the first gRPC call of the reconcile it caused (webhook ->
// dispatch -> fetch from the Git server -> profiles -> reconcile -> observe the nodes).
//
// Prints p50, p99 and max over the rounds, and the calls seen while idle between rounds (0
// means nothing but the webhook could have caused the call measured).
//
// Usage: webhook_latency_bench [--rounds N (default 100)]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "tests/bench/bench_support.h"
#include "tests/bench/push_webhook.h"
#include "tests/bench/rounds.h"
#include "tests/support/e2e/e2e_world.h"
#include "tests/support/e2e/journal_checks.h"

namespace tr::e2e {
namespace {

using bench::Percentile;
using Clock = std::chrono::system_clock;
using Millis = std::chrono::duration<double, std::milli>;

// The first gRPC call (not the fake Kubernetes API) after `since`, or nullopt.
std::optional<JournalLine> FirstTalosCall(const std::vector<JournalLine>& journal, uint64_t since) {
  for (const auto& line : journal) {
    if (line.seq > since && line.call && !line.what.starts_with("kube:")) return line;
  }
  return std::nullopt;
}

int Run(int rounds) {
  const std::filesystem::path dir = BenchDirectory("webhook");
  if (dir.empty()) return 1;
  int rc = 0;
  {
    E2eWorld world(dir);
    auto fail = [&](const absl::Status& st) { return RunFailed(world, st); };
    PushWebhook hook;  // beside the fleet's nodes, known once the simulator runs
    auto at_rest = StartAtRest(
        world, {.fleet = {MakeCluster("hooked", 1, 1, "1.11.6")},
                .sim = {.time_scale = 0.05},
                .talos = "1.11.6",
                .policy = {"settle: 0s"},
                .daemon = [&](DaemonOptions& d) {
                  d.poll_interval = "1h";
                  d.resync = "1h";
                  d.log_level = "warn";
                  hook = ListenForPushWebhooks(world, dir, d);
                }});
    if (!at_rest.ok()) return fail(at_rest.status());
    std::vector<double> latencies_ms;
    int idle_calls = 0;
    uint64_t last_seen = LastSeq(world.Journal());
    for (int round = 0; round < rounds; ++round) {
      // A change to the profile only: the nodes already run it, so the reconcile observes them
      // and finds nothing to do.
      const std::string commit = world.PushProfiles(
          {{"hooked", AtTalos("1.11.6", {fmt::format("settle: {}s", round % 2)})}},
          fmt::format("round {}", round));
      const uint64_t since = LastSeq(world.Journal());
      idle_calls += static_cast<int>(since - last_seen);
      const auto sent = Clock::now();
      if (absl::Status st = hook.Send(commit, fmt::format("bench-{}", round)); !st.ok()) {
        return fail(st);
      }
      std::optional<JournalLine> first;
      if (!world.WaitUntil(std::chrono::seconds(30), [&] {
            first = FirstTalosCall(world.Journal(), since);
            return first.has_value();
          })) {
        return fail(absl::DeadlineExceededError(fmt::format("round {}: no Talos call", round)));
      }
      latencies_ms.push_back(Millis(first->time - sent).count());
      // Let the reconcile finish before the next round, so rounds do not overlap.
      if (auto st = world.WaitForReady("hooked", "1.11.6", commit, std::chrono::seconds(30));
          !st.ok()) {
        return fail(st.status());
      }
      last_seen = LastSeq(world.Journal());
    }
    std::printf("webhook receipt -> first Talos call, %d rounds, git daemon on loopback\n", rounds);
    std::printf("  p50 %8.1f ms\n  p99 %8.1f ms (goal <= 200 ms)\n  max %8.1f ms\n",
                Percentile(latencies_ms, 0.50), Percentile(latencies_ms, 0.99),
                *std::max_element(latencies_ms.begin(), latencies_ms.end()));
    std::printf("  calls while idle between rounds: %d\n", idle_calls);
    bench::PrintBenchRow("webhook receipt → first Talos call, p99", "≤ 200 ms",
                         fmt::format("{:.0f} ms", Percentile(latencies_ms, 0.99)),
                         Percentile(latencies_ms, 0.99) <= 200,
                         fmt::format("p50 {:.0f} ms, {} rounds", Percentile(latencies_ms, 0.50),
                                     rounds));
  }
  std::filesystem::remove_all(dir);
  return rc;
}

}  // namespace
}  // namespace tr::e2e

int main(int argc, char** argv) {
  const int rounds = tr::bench::RoundsFromArgs(argc, argv, 100);
  if (rounds < 1) return 2;
  return tr::e2e::Run(rounds);
}
