// Benchmark: what the daemon costs while nothing changes. The real talos-reconciler daemon
// watches 1 cluster, then 1,000 clusters (5 nodes each: 3 control planes, 2 workers, all on the
// profile's versions) served by one talos-sim. Each fleet runs twice:
//
//   busy: every cluster is resynced each second, so every reconcile is a no-op (observe, plan,
//         decide Ready, record nothing):
//           CPU per no-op reconcile = the daemon's CPU time over a window ÷ reconciles in it
//                                     (from /metrics, read at both ends only), goal ≤ 0.5 ms; the
//                                     repository is polled only once a minute so that polls do
//                                     not count
//           Talos and Kubernetes calls per reconcile, by method (from the simulator's journal),
//           the simulator's CPU, and the daemon's CPU per reconcile by thread (what the
//           reconciles cost, and what the process's own housekeeping adds to them), with
//           the times each thread woke per reconcile and what one wake alone costs on this
//           machine (the benchmark's own thread, sleeping through the window a second at a
//           time);
//   idle: a resync of 10 minutes, so that once each cluster's first reconcile is done nothing
//         runs; once the daemon holds no connection (idle ones close within two minutes), and
//         after the window (at least 30 s, a sweep that gives freed memory back):
//           idle RSS = the daemon's resident memory, goals ≤ 20 MiB (1 cluster) and ≤ 0.3 MiB
//                      per cluster beyond the first (1,000 clusters); printed with its anonymous
//                      part (RssAnon: heap and stacks, what the daemon itself holds; the rest is
//                      the pages of its code and libraries, file-backed and shared).
//
// Usage: idle_bench [--clusters N (the large fleet, default 1000)] [--window S (each
//        measurement window, default 30 s)] [--busy-only 1 (the CPU figures alone, without the
//        idle runs' minutes of waiting for connections to close: for comparing two builds)]
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "fmt/format.h"
#include "tests/bench/bench_support.h"
#include "tests/support/e2e/e2e_world.h"
#include "tests/support/e2e/journal_checks.h"
#include "tests/support/e2e/process_usage.h"

namespace tr::e2e {
namespace {

struct Options {
  int clusters = 1000;
  int window_seconds = 30;
  bool busy_only = false;
};

struct Result {
  int clusters = 0;
  double cpu_ms_per_reconcile = 0;
  double sim_cpu_ms_per_reconcile = 0;
  double calls_per_reconcile = 0;       // Talos
  double kube_calls_per_reconcile = 0;  // Kubernetes
  std::string calls_by_method;          // per reconcile
  std::string cpu_by_thread;            // the daemon's, ms per reconcile
  std::string wakes_by_thread;          // the daemon's runs on a CPU per reconcile
  double wakes_per_reconcile = 0;
  double wake_cost_us = 0;  // this machine's CPU per wake of a thread idle 1 s
  long reconciles = 0;
  bool idle_measured = false;  // false with --busy-only
  double idle_rss_mib = 0;
  double idle_rss_anon_mib = 0;
};

// The calls the simulator served so far, by method ("kube:GET /api/v1/nodes" for its
// Kubernetes API, without the query).
std::map<std::string, size_t> CallsByMethod(E2eWorld& world) {
  std::map<std::string, size_t> calls;
  for (const auto& line : world.Journal()) {
    if (IsClientCall(line)) ++calls[line.what.substr(0, line.what.find('?'))];
  }
  return calls;
}

// Every call the simulator served so far.
size_t CallCount(E2eWorld& world) {
  size_t calls = 0;
  for (const auto& [method, count] : CallsByMethod(world)) calls += count;
  return calls;
}

absl::Status StartFleetAtRest(E2eWorld& world, int clusters, const std::string& resync) {
  return StartAtRest(world, {.fleet = LargeFleet(clusters, "1.11.6"),
                             .sim = {.time_scale = 0.1},
                             .talos = "1.11.6",
                             .files = {{"reconciler.yaml", RepositoryDefaultsYaml("30m")}},
                             .daemon =
                                 [&](DaemonOptions& d) {
                                   d.resync = resync;
                                   d.poll_interval = "1m";
                                   d.workers = 4;
                                 },
                             .timeout = std::chrono::minutes(15)})
      .status();
}

// The busy run: CPU and Talos calls per no-op reconcile, resyncing each cluster every second.
absl::Status MeasureBusy(const std::filesystem::path& dir, const Options& options, Result& r) {
  E2eWorld world(dir);
  if (absl::Status st = StartFleetAtRest(world, r.clusters, "1s"); !st.ok()) return st;
  // Settle: the first reconciles fetched kubeconfigs and wrote the first status, and a cluster
  // looked at again soon starts its watches (a boot-id read and a watch per node). The window
  // is the steady state the goal is about: it starts once a whole round of reconciles made no
  // call (or after two minutes, and the calls then show in the figures).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  for (bool quiet = false; !quiet && std::chrono::steady_clock::now() < deadline;) {
    const long before = DaemonReconciles(world);
    const size_t calls_before = CallCount(world);
    world.WaitUntil(std::chrono::minutes(2),
                    [&] { return DaemonReconciles(world) >= before + r.clusters; });
    quiet = before >= 0 && CallCount(world) == calls_before;
  }
  const long r0 = DaemonReconciles(world);
  const std::map<std::string, size_t> calls0 = CallsByMethod(world);
  auto d0 = ReadProcessUsage(world.daemon().pid());
  auto s0 = ReadProcessUsage(world.sim().pid());
  auto t0 = ReadThreadCpuByName(world.daemon().pid());
  auto w0 = ReadThreadRunsByName(world.daemon().pid());
  // A window of time, not a poll of /metrics: answering it would count as the daemon's CPU.
  // Slept in sleeps of a second, which tell what a wake alone costs on this machine.
  r.wake_cost_us = SleepMeasuringWakeCost(std::chrono::seconds(options.window_seconds));
  const long r1 = DaemonReconciles(world);
  auto d1 = ReadProcessUsage(world.daemon().pid());
  auto s1 = ReadProcessUsage(world.sim().pid());
  auto t1 = ReadThreadCpuByName(world.daemon().pid());
  auto w1 = ReadThreadRunsByName(world.daemon().pid());
  if (!d0.ok() || !d1.ok() || !s0.ok() || !s1.ok() || !t0.ok() || !t1.ok() || !w0.ok() ||
      !w1.ok() || r0 < 0 || r1 <= r0) {
    return absl::InternalError("cannot read the processes' usage");
  }
  r.reconciles = r1 - r0;
  const double n = static_cast<double>(r.reconciles);
  r.cpu_ms_per_reconcile = (d1->cpu_seconds - d0->cpu_seconds) * 1000 / n;
  r.sim_cpu_ms_per_reconcile = (s1->cpu_seconds - s0->cpu_seconds) * 1000 / n;
  // Which threads the figure is made of: the reconciles' own, or the process's housekeeping
  // (the repository's poll, the log, timers) shared out over them.
  double named = 0;
  for (const auto& [seconds, name] : ThreadGrowth(*t0, *t1)) {
    named += seconds;
    r.cpu_by_thread += fmt::format("{} {:.3f}; ", name, seconds * 1000 / n);
  }
  r.cpu_by_thread +=
      fmt::format("other {:.3f}", (d1->cpu_seconds - d0->cpu_seconds - named) * 1000 / n);
  // How often each thread woke: on a machine where a wake costs tens of microseconds before any
  // work, a thread that wakes on a timer costs that whatever it does.
  for (const auto& [runs, name] : ThreadGrowth(*w0, *w1)) {
    r.wakes_per_reconcile += runs / n;
    if (runs / n >= 0.05) r.wakes_by_thread += fmt::format("{} {:.2f}; ", name, runs / n);
  }
  for (const auto& [method, count] : CallsByMethod(world)) {
    auto before = calls0.find(method);
    const double per = static_cast<double>(count - (before == calls0.end() ? 0 : before->second)) / n;
    if (per == 0) continue;
    (method.starts_with("kube:") ? r.kube_calls_per_reconcile : r.calls_per_reconcile) += per;
    r.calls_by_method += fmt::format("{}{} {:.2f}", r.calls_by_method.empty() ? "" : ", ",
                                     method, per);
  }
  return absl::OkStatus();
}

// The idle run: resident memory once every cluster has had its first reconcile and nothing
// runs (a resync of 10 minutes).
absl::Status MeasureIdle(const std::filesystem::path& dir, const Options& options, Result& r) {
  E2eWorld world(dir);
  if (absl::Status st = StartFleetAtRest(world, r.clusters, "10m"); !st.ok()) return st;
  world.WaitUntil(std::chrono::minutes(5), [&] { return DaemonReconciles(world) >= r.clusters; });
  // Idle connections close one to two minutes after their last call (the Talos channels' and the
  // Kubernetes clients' idle timeouts, reconciler/clients/talos/grpc_talos_client.h and
  // reconciler/clients/kube/idle_closer.h).
  const pid_t daemon = world.daemon().pid();
  if (!world.WaitUntil(std::chrono::minutes(4), [&] {
        auto open = CountOpenConnections(daemon);
        return open.ok() && *open == 0;
      })) {
    return absl::DeadlineExceededError("the daemon still holds connections after 4 minutes");
  }
  // Then the window, at least one sweep of the idle closer (half its 1 minute timeout), which
  // gives back to the system the memory the closed connections freed.
  std::this_thread::sleep_for(std::chrono::seconds(std::max(30, options.window_seconds)));
  auto usage = ReadProcessUsage(world.daemon().pid());
  if (!usage.ok()) return usage.status();
  r.idle_rss_mib = static_cast<double>(usage->rss_kib) / 1024;
  r.idle_rss_anon_mib = static_cast<double>(usage->rss_anon_kib) / 1024;
  r.idle_measured = true;
  return absl::OkStatus();
}

absl::StatusOr<Result> Measure(const std::filesystem::path& dir, int clusters,
                               const Options& options) {
  Result r;
  r.clusters = clusters;
  if (absl::Status st = MeasureBusy(dir / "busy", options, r); !st.ok()) return st;
  if (options.busy_only) return r;
  if (absl::Status st = MeasureIdle(dir / "idle", options, r); !st.ok()) return st;
  return r;
}

void Print(const Result& r) {
  const std::string idle = !r.idle_measured
                               ? std::string("idle RSS not measured (--busy-only)")
                               : fmt::format("idle RSS {:.1f} MiB ({:.1f} MiB anonymous)",
                                             r.idle_rss_mib, r.idle_rss_anon_mib);
  std::printf(
      "%4d clusters: %ld no-op reconciles; daemon %.2f CPU ms each; %.1f Talos and %.1f "
      "Kubernetes calls each (%s); talos-sim %.2f CPU ms each; %s\n",
      r.clusters, r.reconciles, r.cpu_ms_per_reconcile, r.calls_per_reconcile,
      r.kube_calls_per_reconcile, r.calls_by_method.c_str(), r.sim_cpu_ms_per_reconcile,
      idle.c_str());
  std::printf("  daemon CPU ms per no-op reconcile by thread: %s\n", r.cpu_by_thread.c_str());
  std::printf(
      "  daemon threads woken per no-op reconcile: %.2f (%sthe rest fewer than 0.05 each); a "
      "wake of a thread idle 1 s costs %.0f µs of CPU on this machine (the benchmark's own)\n",
      r.wakes_per_reconcile, r.wakes_by_thread.c_str(), r.wake_cost_us);
  std::fflush(stdout);
}

int Run(const Options& options) {
  RaiseFileLimit();
  const std::filesystem::path dir = BenchDirectory("idle");
  if (dir.empty()) return 1;
  auto one = Measure(dir / "one", 1, options);
  if (!one.ok()) {
    std::fprintf(stderr, "1 cluster: %s\n", std::string(one.status().message()).c_str());
    return 1;
  }
  Print(*one);
  auto many = Measure(dir / "many", options.clusters, options);
  if (!many.ok()) {
    std::fprintf(stderr, "%d clusters: %s\n", options.clusters,
                 std::string(many.status().message()).c_str());
    return 1;
  }
  Print(*many);
  std::filesystem::remove_all(dir);
  PrintBenchRow("CPU per no-op reconcile (5 nodes)", "≤ 0.5 ms",
                fmt::format("{:.2f} ms", one->cpu_ms_per_reconcile),
                one->cpu_ms_per_reconcile <= 0.5 && many->cpu_ms_per_reconcile <= 0.5,
                fmt::format("{:.2f} ms with {} clusters; {:.1f} Talos and {:.1f} Kubernetes "
                            "calls each",
                            many->cpu_ms_per_reconcile, many->clusters, one->calls_per_reconcile,
                            one->kube_calls_per_reconcile));
  if (options.busy_only) return 0;
  PrintBenchRow(
      "idle RSS, 1 cluster", "≤ 20 MiB", fmt::format("{:.1f} MiB", one->idle_rss_mib),
      one->idle_rss_mib <= 20,
      fmt::format("{:.1f} MiB anonymous; the rest is code and libraries", one->idle_rss_anon_mib));
  const double per_cluster = (many->idle_rss_mib - one->idle_rss_mib) / (many->clusters - 1);
  PrintBenchRow(fmt::format("idle RSS per cluster beyond the first, {} clusters", many->clusters),
                "≤ 0.3 MiB", fmt::format("{:.2f} MiB", per_cluster), per_cluster <= 0.3,
                fmt::format("{:.1f} MiB in all, {:.1f} MiB anonymous", many->idle_rss_mib,
                            many->idle_rss_anon_mib));
  return 0;
}

}  // namespace
}  // namespace tr::e2e

int main(int argc, char** argv) {
  tr::e2e::Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--clusters") == 0) {
      options.clusters = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--window") == 0) {
      options.window_seconds = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--busy-only") == 0) {
      options.busy_only = std::strcmp(argv[i + 1], "0") != 0;
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  return tr::e2e::Run(options);
}
