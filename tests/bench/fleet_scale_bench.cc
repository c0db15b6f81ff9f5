// Benchmark: many clusters upgraded at once. One commit bumps every cluster of N (default 200)
// clusters of 5 nodes (3 control planes, 2 workers; Talos 1.11.6 -> 1.12.0, legacy path); the
// real talos-reconciler daemon rolls them all out against one talos-sim process. Prints the wall
// time from the push until every cluster is Ready on the status branch, relative to one cluster
// alone (measured first, the same way), and the daemon's CPU seconds and peak RSS (from /proc),
// beside the simulator's.
//
// Usage: fleet_scale_bench [--clusters N] [--time-scale X (default 0.1: 3 s per node)]
//        [--workers N (the daemon's --workers, default 4)]
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "fmt/format.h"
#include "tests/bench/bench_support.h"
#include "tests/support/e2e/e2e_world.h"
#include "tests/support/e2e/journal_checks.h"
#include "tests/support/e2e/process_usage.h"

namespace tr::e2e {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int clusters = 200;
  double time_scale = 0.1;
  int workers = 4;
};

struct Result {
  double wall_seconds = 0;
  ProcessUsage daemon_before;  // at the push
  ProcessUsage daemon_after;   // when every cluster is Ready
  ProcessUsage sim_after;
  int not_once = 0;  // nodes not upgraded exactly once
};

absl::StatusOr<Result> RunFleet(const std::filesystem::path& dir, int clusters,
                                const Options& options) {
  E2eWorld world(dir);
  const auto fleet = LargeFleet(clusters, "1.11.6");
  if (auto st = world.StartFleet(
          fleet, {.time_scale = options.time_scale, .refuse_connections_while_down = false});
      !st.ok()) {
    return st;
  }
  std::vector<std::string> names;
  std::map<std::string, ProfileDef> before, after;
  for (const auto& c : fleet) {
    names.push_back(c.name);
    before[c.name] = AtTalos("1.11.6");
    after[c.name] = AtTalos("1.12.0");
  }
  world.PushProfiles(before, "initial profiles",
                     {{"reconciler.yaml", RepositoryDefaultsYaml("30m")}});
  if (auto st = world.StartDaemon([&](DaemonOptions& d) {
        d.workers = options.workers;
        d.node_poll_interval = "200ms";
        d.resync = "1m";
      });
      !st.ok()) {
    return st;
  }
  if (auto st = WaitAllReady(world, names, "1.11.6", "", std::chrono::minutes(10)); !st.ok()) {
    return absl::DeadlineExceededError(
        fmt::format("before the change: {}\n{}", std::string(st.message()), world.Diagnostics()));
  }
  const uint64_t since = LastSeq(world.Journal());
  Result result;
  const std::string commit = world.PushProfiles(after, "every cluster: Talos 1.12.0");
  const auto pushed = Clock::now();
  if (auto usage = ReadProcessUsage(world.daemon().pid()); usage.ok()) {
    result.daemon_before = *usage;
  }
  if (auto st = WaitAllReady(world, names, "1.12.0", commit, std::chrono::minutes(60)); !st.ok()) {
    return absl::DeadlineExceededError(
        fmt::format("the rollout: {}\n{}", std::string(st.message()), world.Diagnostics()));
  }
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - pushed).count();
  if (auto usage = ReadProcessUsage(world.daemon().pid()); usage.ok()) result.daemon_after = *usage;
  if (auto usage = ReadProcessUsage(world.sim().pid()); usage.ok()) result.sim_after = *usage;
  const auto& journal = world.Journal();
  for (const auto& name : names) {
    for (const auto& span : UpgradeSpans(journal, name, since)) {
      result.not_once += span.version_changes.size() != 1 || span.upgrade_calls_ok != 1;
    }
  }
  return result;
}

void Print(const char* label, int clusters, const Result& r) {
  std::printf(
      "%-22s %4d clusters, %5d nodes: wall %7.2f s; daemon %6.2f CPU s (rollout), "
      "%6.2f CPU s (all), peak RSS %6.1f MiB, %d threads; talos-sim %6.2f CPU s, "
      "RSS %6.1f MiB\n",
      label, clusters, clusters * 5, r.wall_seconds,
      r.daemon_after.cpu_seconds - r.daemon_before.cpu_seconds, r.daemon_after.cpu_seconds,
      static_cast<double>(r.daemon_after.peak_rss_kib) / 1024, r.daemon_after.threads,
      r.sim_after.cpu_seconds, static_cast<double>(r.sim_after.rss_kib) / 1024);
  std::fflush(stdout);
}

int Run(const Options& options) {
  RaiseFileLimit();
  char pattern[] = "/tmp/tr-bench-fleet-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return 1;
  const std::filesystem::path dir = pattern;
  std::printf(
      "every cluster: 3 control planes + 2 workers, Talos 1.11.6 -> 1.12.0, time scale %g "
      "(%.1f s per node), daemon --workers %d\n",
      options.time_scale, 30 * options.time_scale, options.workers);
  auto one = RunFleet(dir / "one", 1, options);
  if (!one.ok()) {
    std::fprintf(stderr, "one cluster: %s\n", std::string(one.status().message()).c_str());
    return 1;
  }
  Print("one cluster alone:", 1, *one);
  auto many = RunFleet(dir / "many", options.clusters, options);
  if (!many.ok()) {
    std::fprintf(stderr, "%d clusters: %s\n", options.clusters,
                 std::string(many.status().message()).c_str());
    return 1;
  }
  Print("all at once:", options.clusters, *many);
  const double ratio = many->wall_seconds / one->wall_seconds;
  std::printf("wall time relative to one cluster alone: %.2f\n", ratio);
  std::fflush(stdout);
  PrintBenchRow(fmt::format("{} clusters × 5 nodes at once ÷ one cluster alone", options.clusters),
                "≤ 1.10", fmt::format("{:.2f}", ratio), ratio <= 1.10,
                fmt::format("time scale {}; daemon {:.0f} CPU s, talos-sim {:.0f} CPU s, "
                            "daemon peak RSS {:.0f} MiB",
                            options.time_scale,
                            many->daemon_after.cpu_seconds - many->daemon_before.cpu_seconds,
                            many->sim_after.cpu_seconds,
                            static_cast<double>(many->daemon_after.peak_rss_kib) / 1024));
  std::filesystem::remove_all(dir);
  if (one->not_once + many->not_once > 0) {
    std::fprintf(stderr, "%d nodes were not upgraded exactly once\n",
                 one->not_once + many->not_once);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tr::e2e

int main(int argc, char** argv) {
  tr::e2e::Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--clusters") == 0) {
      options.clusters = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--time-scale") == 0) {
      options.time_scale = std::atof(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--workers") == 0) {
      options.workers = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  return tr::e2e::Run(options);
}
