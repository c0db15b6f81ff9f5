// Benchmark: many clusters upgraded at once. One commit bumps every cluster of N (default 200)
// clusters of 5 nodes (3 control planes, 2 workers; Talos 1.11.6 -> 1.12.0, legacy path); the
// real talos-reconciler daemon rolls them all out against one talos-sim process. Prints the wall
// time from the push until every cluster is Ready on the status branch, relative to one cluster
// alone (measured first, the same way), and the daemon's CPU seconds (in all and by thread
// name) and peak RSS (from /proc), beside the simulator's, and how busy the whole machine was
// meanwhile (from /proc/stat: the git server and anything else running count too).
//
// Usage: fleet_scale_bench [--clusters N (repeat for several fleets; default 200, then 1000)]
//        [--time-scale X (default 0.1: 3 s per node)]
//        [--workers N (the daemon's --workers, default: one per cluster, at most 256)]
//        [--node-watches on|off (off: the daemon's --no-node-watches; default on)]
// On stderr it says when each rollout was pushed and when every node was ready, for a profiler
// to record the rollout alone; TR_E2E_KEEP set keeps its directory (the simulator's journal).
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status_yaml.h"
#include "fmt/format.h"
#include "tests/bench/bench_support.h"
#include "tests/support/e2e/e2e_world.h"
#include "tests/support/e2e/journal_checks.h"
#include "tests/support/e2e/process_usage.h"
#include "tests/support/process.h"

namespace tr::e2e {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int clusters = 200;
  double time_scale = 0.1;
  int workers = 0;  // 0: one per cluster, at most 256
  bool node_watches = true;
};

// The daemon's --workers for a fleet of `clusters`.
int WorkersFor(int clusters, int asked) { return asked > 0 ? asked : std::min(clusters, 256); }

struct Result {
  double wall_seconds = 0;
  ProcessUsage daemon_before;  // at the push
  ProcessUsage daemon_after;   // when every cluster is Ready
  ProcessUsage sim_before;
  ProcessUsage sim_after;
  double machine_busy = 0;        // share of all cores' time busy during the rollout
  double machine_busy_seconds = 0;  // all cores' busy time during the rollout, CPU seconds
  int not_once = 0;               // nodes not upgraded exactly once
  int status_commits = 0;         // on the status branch during the rollout
  int first_cluster_records = 0;  // of those, the ones that changed the first cluster's file
  int talos_calls = 0;  // the daemon's, answered by talos-sim during the rollout (its journal)
  int kube_calls = 0;             // of its Kubernetes API, the same
  std::map<std::string, int> calls_by_method;  // both kinds, by method ("kube:GET" for kube)
  long reconciles = -1;   // the daemon's during the rollout (its /metrics); -1: not read
  double mirror_mib = 0;  // the daemon's mirror on disk at the end (its packs and loose objects)
  // The daemon's threads' CPU by name (base/thread_name.h) at the push and at the end.
  std::map<std::string, double> daemon_threads_before;
  std::map<std::string, double> daemon_threads_after;
};


// Commits in (from, to] on the status branch; with `path`, only those that changed it.
int CommitsBetween(const ProfileRepo& repo, const std::string& from, const std::string& to,
                   const std::string& path = "") {
  std::vector<std::string> argv = {"git",      "-C",      repo.bare().string(),
                                   "rev-list", "--count", from.empty() ? to : from + ".." + to};
  if (!path.empty()) argv.insert(argv.end(), {"--", path});
  return std::atoi(gitsource::testing::RunCommand(argv).out.c_str());
}

// A Kubernetes call's journal entry without its query and the name of the node it names
// ("kube:PATCH /api/v1/nodes/w-0" -> "kube:PATCH /api/v1/nodes/*"), to count calls by kind.
std::string KubeCallKind(const std::string& what) {
  std::string kind = what.substr(0, what.find('?'));
  const std::string nodes = "/api/v1/nodes/";
  if (const size_t at = kind.find(nodes); at != std::string::npos) {
    kind = kind.substr(0, at + nodes.size()) + "*";
  }
  return kind;
}

// Busy and total time of all cores so far (/proc/stat's first line, in ticks).
std::pair<double, double> MachineTicks() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  stat >> cpu;
  double total = 0, idle = 0, value = 0;
  for (int field = 0; field < 8 && stat >> value; ++field) {
    total += value;
    if (field == 3 || field == 4) idle += value;  // idle, iowait
  }
  return {total - idle, total};
}

absl::StatusOr<Result> RunFleet(const std::filesystem::path& dir, int clusters,
                                const Options& options) {
  E2eWorld world(dir);
  absl::StatusOr<std::vector<std::string>> names = StartAtRest(
      world, {.fleet = LargeFleet(clusters, "1.11.6"),
              .sim = {.time_scale = options.time_scale, .refuse_connections_while_down = false},
              .talos = "1.11.6",
              .files = {{"reconciler.yaml", RepositoryDefaultsYaml("30m")}},
              .daemon =
                  [&](DaemonOptions& d) {
                    d.workers = options.workers;
                    if (!options.node_watches) d.extra_args.push_back("--no-node-watches");
                    d.node_poll_interval = "200ms";
                    d.resync = "1m";
                  },
              .timeout = std::chrono::minutes(10)});
  if (!names.ok()) return names.status();
  std::map<std::string, ProfileDef> after;
  for (const auto& name : *names) after[name] = AtTalos("1.12.0");
  const uint64_t since = LastSeq(world.Journal());
  const std::string status_before = world.repo().StatusTip();
  Result result;
  const std::string commit = world.PushProfiles(after, "every cluster: Talos 1.12.0");
  const auto pushed = Clock::now();
  const auto machine_before = MachineTicks();
  if (auto usage = ReadProcessUsage(world.daemon().pid()); usage.ok()) {
    result.daemon_before = *usage;
  }
  if (auto usage = ReadProcessUsage(world.sim().pid()); usage.ok()) result.sim_before = *usage;
  if (auto threads = ReadThreadCpuByName(world.daemon().pid()); threads.ok()) {
    result.daemon_threads_before = *std::move(threads);
  }
  const long reconciles_before = DaemonReconciles(world);
  // On stderr, for a profiler to record the rollout alone (docs/benchmarks.md).
  std::fprintf(stderr, "rollout of %d clusters: pushed\n", clusters);
  if (auto st = WaitAllReady(world, *names, "1.12.0", commit, std::chrono::minutes(60)); !st.ok()) {
    return absl::DeadlineExceededError(
        fmt::format("the rollout: {}\n{}", std::string(st.message()), world.Diagnostics()));
  }
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - pushed).count();
  std::fprintf(stderr, "rollout of %d clusters: every node ready\n", clusters);
  const auto machine_after = MachineTicks();
  result.machine_busy = (machine_after.first - machine_before.first) /
                        std::max(1.0, machine_after.second - machine_before.second);
  result.machine_busy_seconds =
      (machine_after.first - machine_before.first) / static_cast<double>(sysconf(_SC_CLK_TCK));
  if (auto usage = ReadProcessUsage(world.daemon().pid()); usage.ok()) result.daemon_after = *usage;
  if (auto threads = ReadThreadCpuByName(world.daemon().pid()); threads.ok()) {
    result.daemon_threads_after = *std::move(threads);
  }
  if (auto usage = ReadProcessUsage(world.sim().pid()); usage.ok()) result.sim_after = *usage;
  if (const long reconciles = DaemonReconciles(world); reconciles_before >= 0 && reconciles >= 0) {
    result.reconciles = reconciles - reconciles_before;
  }
  result.mirror_mib =
      static_cast<double>(DirectoryBytes(world.dir() / "daemon-state" / "mirror.git" / "objects")) /
      (1 << 20);
  const std::string status_after = world.repo().StatusTip();
  result.status_commits = CommitsBetween(world.repo(), status_before, status_after);
  result.first_cluster_records = CommitsBetween(world.repo(), status_before, status_after,
                                                core::ClusterStatusPath(names->front()));
  const auto& journal = world.Journal();
  for (const auto& line : journal) {
    if (line.seq <= since || !IsClientCall(line)) continue;
    const bool kube = line.what.starts_with("kube:");
    ++(kube ? result.kube_calls : result.talos_calls);
    ++result.calls_by_method[kube ? KubeCallKind(line.what) : line.what];
  }
  for (const auto& name : *names) {
    for (const auto& span : UpgradeSpans(journal, name, since)) {
      result.not_once += span.version_changes.size() != 1 || span.upgrade_calls_ok != 1;
    }
  }
  return result;
}

// The daemon's CPU in the rollout by thread name, most first; what is left (threads that ended)
// as "other".
void PrintThreadCpu(const Result& r) {
  const auto spent = ThreadGrowth(r.daemon_threads_before, r.daemon_threads_after);
  double named = 0;
  for (const auto& [seconds, name] : spent) named += seconds;
  std::printf("  daemon CPU s in the rollout by thread:");
  for (const auto& [seconds, name] : spent) std::printf(" %s %.2f;", name.c_str(), seconds);
  std::printf(" other %.2f\n", r.daemon_after.cpu_seconds - r.daemon_before.cpu_seconds - named);
}

void Print(const char* label, int clusters, const Result& r) {
  std::printf(
      "%-22s %4d clusters, %5d nodes: wall %7.2f s; daemon %6.2f CPU s (rollout), "
      "%6.2f CPU s (all), peak RSS %6.1f MiB, %d threads; talos-sim %6.2f CPU s (rollout), "
      "%6.2f CPU s (all), RSS %6.1f MiB; machine %3.0f%% busy during the rollout; %d status "
      "commits, %d of them recording the first cluster, mirror %.1f MiB; %.1f Talos and %.1f "
      "Kubernetes calls per node upgrade\n",
      label, clusters, clusters * 5, r.wall_seconds,
      r.daemon_after.cpu_seconds - r.daemon_before.cpu_seconds, r.daemon_after.cpu_seconds,
      static_cast<double>(r.daemon_after.peak_rss_kib) / 1024, r.daemon_after.threads,
      r.sim_after.cpu_seconds - r.sim_before.cpu_seconds, r.sim_after.cpu_seconds,
      static_cast<double>(r.sim_after.rss_kib) / 1024, 100 * r.machine_busy, r.status_commits,
      r.first_cluster_records, r.mirror_mib, r.talos_calls / (5.0 * clusters),
      r.kube_calls / (5.0 * clusters));
  // What neither the daemon nor the simulator took: the bench itself (its reads of the status
  // branch), the git server it runs, the kernel's own threads.
  std::printf("  the rest of the machine in the rollout: %.2f CPU s\n",
              r.machine_busy_seconds - (r.daemon_after.cpu_seconds - r.daemon_before.cpu_seconds) -
                  (r.sim_after.cpu_seconds - r.sim_before.cpu_seconds));
  PrintThreadCpu(r);
  std::vector<std::pair<int, std::string>> methods;
  for (const auto& [method, count] : r.calls_by_method) methods.emplace_back(count, method);
  std::sort(methods.rbegin(), methods.rend());
  std::printf("  calls per node upgrade by method:");
  for (const auto& [count, method] : methods) {
    std::printf(" %s %.1f;", method.c_str(), count / (5.0 * clusters));
  }
  std::printf("\n");
  if (r.reconciles >= 0) {
    std::printf("  reconciles per node upgrade: %.1f\n",
                static_cast<double>(r.reconciles) / (5.0 * clusters));
  }
  std::fflush(stdout);
}

int Run(Options options) {
  options.workers = WorkersFor(options.clusters, options.workers);
  RaiseFileLimit();
  const std::filesystem::path dir = BenchDirectory("fleet");
  if (dir.empty()) return 1;
  std::printf(
      "every cluster: 3 control planes + 2 workers, Talos 1.11.6 -> 1.12.0, time scale %g "
      "(%.1f s per node), daemon --workers %d%s\n",
      options.time_scale, 30 * options.time_scale, options.workers,
      options.node_watches ? "" : " --no-node-watches");
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
                fmt::format("time scale {}, --workers {}; in the rollout daemon {:.0f} CPU s, "
                            "talos-sim {:.0f} CPU s, machine {:.0f}% busy; daemon peak RSS "
                            "{:.0f} MiB",
                            options.time_scale, options.workers,
                            many->daemon_after.cpu_seconds - many->daemon_before.cpu_seconds,
                            many->sim_after.cpu_seconds - many->sim_before.cpu_seconds,
                            100 * many->machine_busy,
                            static_cast<double>(many->daemon_after.peak_rss_kib) / 1024));
  // The daemon's own cost, whatever the simulator's: its CPU seconds in the rollout ÷ the node
  // upgrades it made (5 per cluster). The goal is set at 1,000 clusters.
  for (const auto& [clusters, result] :
       {std::pair{1, &*one}, std::pair{options.clusters, &*many}}) {
    const double ms = 1000 *
                      (result->daemon_after.cpu_seconds - result->daemon_before.cpu_seconds) /
                      (5.0 * clusters);
    const bool goal = clusters >= 1000;
    PrintBenchRow(fmt::format("daemon CPU per node upgrade, {} clusters", clusters),
                  goal ? "≤ 5 ms" : "", fmt::format("{:.1f} ms", ms),
                  goal ? std::optional<bool>(ms <= 5) : std::nullopt,
                  fmt::format("{} node upgrades, time scale {}", 5 * clusters, options.time_scale));
  }
  // Kept, with the simulator's journal, when TR_E2E_KEEP is set (as the end-to-end tests do).
  if (std::getenv("TR_E2E_KEEP") == nullptr) {
    std::filesystem::remove_all(dir);
  } else {
    std::fprintf(stderr, "kept %s\n", dir.c_str());
  }
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
  std::vector<int> fleets;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--clusters") == 0) {
      fleets.push_back(std::atoi(argv[i + 1]));
    } else if (std::strcmp(argv[i], "--time-scale") == 0) {
      options.time_scale = std::atof(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--workers") == 0) {
      options.workers = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--node-watches") == 0 &&
               (std::strcmp(argv[i + 1], "on") == 0 || std::strcmp(argv[i + 1], "off") == 0)) {
      options.node_watches = std::strcmp(argv[i + 1], "on") == 0;
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (fleets.empty()) fleets = {200, 1000};
  int rc = 0;
  for (int clusters : fleets) {
    options.clusters = clusters;
    rc |= tr::e2e::Run(options);
  }
  return rc;
}
