// Benchmark: from a push webhook to the first node's upgrade call, on both upgrade paths. The
// real talos-reconciler daemon (repository poll one hour, so only the webhook makes it look)
// watches a git daemon on loopback and two 2-node talos-sim clusters:
//   legacy     Talos 1.11.6 <-> 1.12.0: the first node's MachineService/Upgrade call
//   lifecycle  Talos 1.13.2 <-> 1.13.9: the first node's LifecycleService/Upgrade call, after
//              the pre-pull of the installer on every node
// Rounds alternate between the clusters: each pushes one commit that moves one cluster to its
// other version (allowDowngrade), POSTs a signed GitHub push delivery, and waits until that
// cluster is Ready on it. A round starts a second after the last one's Ready, as merges do not
// follow one another within a status-commit window (a burst of commits right before would
// make the first records wait for the window; docs/running.md).
// The simulator pulls images in no time (timings image_pull: 0s), so what is measured is the
// reconciler's part: the webhook, the fetch, the observations, the status records pushed before
// the call (the pre-pull's and the node's write-ahead record), and, on the lifecycle path, the
// pre-pull calls themselves. The time of each call is the simulator's journal's: the legacy
// Upgrade's line (journaled when it answers, at once without a pull) and the lifecycle install's
// "start" line.
//
// Prints p50, p99 and max per path (goal p99 <= 100 ms; it was 0.5 s before watches).
//
// Usage: first_call_bench [--rounds N (per path; default 50)]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
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

struct Path {
  std::string cluster;
  std::string kubernetes;
  std::string versions[2];
  int upgrades = 0;  // the version asked for is versions[upgrades % 2]
  std::vector<double> latencies_ms;
};

// Whether `line` is the start of a node's upgrade on `cluster`: the legacy Upgrade call, or a
// lifecycle install beginning.
bool StartsUpgrade(const JournalLine& line, const std::string& cluster) {
  if (line.cluster != cluster) return false;
  if (line.call) return line.what == "/machine.MachineService/Upgrade" && line.code == "OK";
  return line.what == "install" && line.detail.starts_with("start ");
}

std::optional<JournalLine> FirstUpgrade(const std::vector<JournalLine>& journal, uint64_t since,
                                        const std::string& cluster) {
  for (const auto& line : journal) {
    if (line.seq > since && StartsUpgrade(line, cluster)) return line;
  }
  return std::nullopt;
}

const std::vector<std::string> kPolicy = {"settle: 0s", "allowDowngrade: true"};

std::map<std::string, ProfileDef> Profiles(const std::vector<Path>& paths) {
  std::map<std::string, ProfileDef> profiles;
  for (const Path& p : paths) {
    profiles[p.cluster] = AtTalos(p.versions[p.upgrades % 2], kPolicy, p.kubernetes);
  }
  return profiles;
}

void Report(const Path& p) {
  const double p50 = Percentile(p.latencies_ms, 0.50);
  const double p99 = Percentile(p.latencies_ms, 0.99);
  const double max = *std::max_element(p.latencies_ms.begin(), p.latencies_ms.end());
  std::printf("%-9s %s <-> %s: p50 %6.0f ms  p99 %6.0f ms  max %6.0f ms  (%zu rounds)\n",
              p.cluster.c_str(), p.versions[0].c_str(), p.versions[1].c_str(), p50, p99, max,
              p.latencies_ms.size());
  PrintBenchRow(
      fmt::format("push webhook → first node's upgrade call, {} path, p99", p.cluster), "≤ 100 ms",
      fmt::format("{:.0f} ms", p99), p99 <= 100,
      fmt::format("p50 {:.0f} ms, max {:.0f} ms, {} rounds", p50, max, p.latencies_ms.size()));
}

int Run(int rounds) {
  const std::filesystem::path dir = BenchDirectory("first-call");
  if (dir.empty()) return 1;
  std::vector<Path> paths = {{"legacy", "1.34.1", {"1.11.6", "1.12.0"}, 0, {}},
                             {"lifecycle", "1.35.0", {"1.13.2", "1.13.9"}, 0, {}}};
  {
    E2eWorld world(dir);
    auto fail = [&](const absl::Status& st) { return RunFailed(world, st); };
    std::vector<ClusterDef> fleet;
    for (const Path& p : paths) {
      fleet.push_back(MakeCluster(p.cluster, 1, 1, p.versions[0], p.kubernetes));
    }
    if (auto st = world.StartFleet(fleet, {.time_scale = 0.02, .timings = "{image_pull: 0s}"});
        !st.ok()) {
      return fail(st);
    }
    world.PushProfiles(Profiles(paths), "initial profiles",
                       {{"reconciler.yaml", RepositoryDefaultsYaml("5m")}});
    PushWebhook hook;
    if (auto st = world.StartDaemon([&](DaemonOptions& d) {
          d.poll_interval = "1h";
          d.resync = "1h";
          d.node_poll_interval = "200ms";
          hook = ListenForPushWebhooks(world, dir, d);
        });
        !st.ok()) {
      return fail(st);
    }
    for (const Path& p : paths) {
      if (auto st = world.WaitForReady(p.cluster, p.versions[0], "", std::chrono::minutes(2));
          !st.ok()) {
        return fail(st.status());
      }
    }
    for (int round = 0; round < 2 * rounds; ++round) {
      Path& p = paths[round % 2];
      ++p.upgrades;
      std::this_thread::sleep_for(std::chrono::seconds(1));  // see the top: not back to back
      const std::string commit = world.PushProfiles(
          Profiles(paths), fmt::format("round {}: {} to {}", round, p.cluster,
                                       p.versions[p.upgrades % 2]));
      const uint64_t since = LastSeq(world.Journal());
      const auto sent = Clock::now();
      if (absl::Status st = hook.Send(commit, fmt::format("bench-{}", round)); !st.ok()) {
        return fail(st);
      }
      if (auto st = world.WaitForReady(p.cluster, p.versions[p.upgrades % 2], commit,
                                       std::chrono::minutes(2));
          !st.ok()) {
        return fail(st.status());
      }
      std::optional<JournalLine> first = FirstUpgrade(world.Journal(), since, p.cluster);
      if (!first) {
        return fail(absl::InternalError(
            fmt::format("round {}: {} Ready with no upgrade call", round, p.cluster)));
      }
      p.latencies_ms.push_back(Millis(first->time - sent).count());
    }
    std::printf(
        "push webhook -> first node's upgrade call, %d rounds per path, git daemon on loopback\n",
        rounds);
    for (const Path& p : paths) Report(p);
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace tr::e2e

int main(int argc, char** argv) {
  const int rounds = tr::bench::RoundsFromArgs(argc, argv, 50);
  if (rounds < 1) return 2;
  return tr::e2e::Run(rounds);
}
