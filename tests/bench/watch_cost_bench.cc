// Benchmark (issue 53): what COSI watches cost the process that holds them. One talos-sim (a
// child process) serves N clusters of 3 control planes; this process holds one Talos client per
// cluster (the daemon's gRPC client with its default options) and goes through four states:
//
//   clients:   the clients made, nothing asked yet;
//   polled:    one observation's COSI reads of every node (MachineStatus Get and ExtensionStatuses
//              List, what reconciler/operations/observer.cc reads), the connections they opened
//              still open (they close after the client's 1-minute idle timeout);
//   watched:   on top of that, a watch of each of those two kinds on every node (bootstrap
//              contents, as `talosctl get --watch`), every one bootstrapped and held;
//   cancelled: every watch cancelled and its handle destroyed.
//
// For each state it prints this process's threads, anonymous resident memory (RssAnon: heap and
// stacks), open descriptors and TCP connections, and the difference watched − polled per cluster
// and per watch; and the CPU time this process and the simulator use over an idle window in the
// polled state and again in the watched state.
//
// Usage: watch_cost_bench [--clusters N (one fleet; default: 1, 50 and 200 in turn)]
//                         [--window S (each idle window, default 10 s)]
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "reconciler/clients/talos/grpc_talos_client.h"
#include "reconciler/clients/talos/talosconfig.h"
#include "tests/bench/bench_support.h"
#include "tests/support/e2e/process_usage.h"
#include "tests/support/e2e/sim_process.h"
#include "tests/support/wait.h"

namespace tr::e2e {
namespace {

namespace talos = reconciler::talos;

constexpr int kNodesPerCluster = 3;
constexpr int kWatchesPerNode = 2;  // MachineStatuses and ExtensionStatuses

struct Options {
  std::vector<int> fleets = {1, 50, 200};
  int window_seconds = 10;
};

// One state's figures.
struct Point {
  int threads = 0;
  long anon_kib = 0;
  int fds = 0;
  int tcp = 0;
};

absl::StatusOr<Point> Measure() {
  absl::StatusOr<ProcessUsage> usage = ReadProcessUsage(getpid());
  if (!usage.ok()) return usage.status();
  absl::StatusOr<int> tcp = CountOpenConnections(getpid());
  if (!tcp.ok()) return tcp.status();
  Point point{usage->threads, usage->rss_anon_kib, 0, *tcp};
  for ([[maybe_unused]] const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++point.fds;
  }
  return point;
}

// This process's CPU time (user + system) in seconds, to the microsecond (/proc counts in
// clock ticks of 10 ms, too coarse for an idle process).
double OwnCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// CPU seconds of this process and of the simulator over `seconds` of doing nothing.
absl::StatusOr<std::pair<double, double>> IdleCpu(SimProcess& sim, int seconds) {
  const double self0 = OwnCpuSeconds();
  auto sim0 = ReadProcessUsage(sim.pid());
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  const double self1 = OwnCpuSeconds();
  auto sim1 = ReadProcessUsage(sim.pid());
  if (!sim0.ok() || !sim1.ok()) return absl::UnavailableError("the simulator is gone");
  return std::make_pair(self1 - self0, sim1->cpu_seconds - sim0->cpu_seconds);
}

// The watches of a fleet and what they reported.
struct Watches {
  std::vector<std::unique_ptr<talos::CosiWatch>> handles;
  test_support::Watched<int> bootstrapped;
  std::atomic<int> ended{0};
  std::atomic<long> events{0};
};

// One observation's COSI reads of every node; the number of reads that failed.
int PollOnce(const std::vector<std::unique_ptr<talos::TalosClient>>& clients,
             const std::vector<SimClusterInfo>& clusters) {
  int failed = 0;
  for (size_t c = 0; c < clusters.size(); ++c) {
    for (const auto& node : clusters[c].nodes) {
      failed += !clients[c]->GetMachineStatus(node.address).ok();
      failed += !clients[c]
                     ->CosiList(node.address, "runtime", "ExtensionStatuses.runtime.talos.dev")
                     .ok();
    }
  }
  return failed;
}

void StartWatches(const std::vector<std::unique_ptr<talos::TalosClient>>& clients,
                  const std::vector<SimClusterInfo>& clusters, Watches& watches) {
  for (size_t c = 0; c < clusters.size(); ++c) {
    for (const auto& node : clusters[c].nodes) {
      for (const char* type :
           {"MachineStatuses.runtime.talos.dev", "ExtensionStatuses.runtime.talos.dev"}) {
        talos::WatchCallbacks callbacks;
        callbacks.on_event = [&watches](const talos::CosiEvent& event) {
          ++watches.events;
          if (event.type == talos::CosiEventType::kBootstrapped) {
            watches.bootstrapped.Change([](int& n) { ++n; });
          }
        };
        callbacks.on_done = [&watches](const absl::Status& status) {
          if (!absl::IsCancelled(status)) {
            std::fprintf(stderr, "a watch ended: %s\n", std::string(status.message()).c_str());
          }
          ++watches.ended;
        };
        watches.handles.push_back(clients[c]->StartWatch(
            node.address, {.namespace_name = "runtime", .type = type, .id = {}},
            std::move(callbacks)));
      }
    }
  }
}

std::string Line(const char* state, const Point& p) {
  return fmt::format("{:<10} {:>8} {:>12.1f} {:>8} {:>8}", state, p.threads, p.anon_kib / 1024.0,
                     p.fds, p.tcp);
}

int RunFleet(int clusters, const Options& options) {
  const std::filesystem::path dir = BenchDirectory("watch-cost");
  if (dir.empty()) return 1;
  FleetOptions fleet_options;
  fleet_options.time_scale = 1;  // nothing changes by itself in the windows
  auto sim = SimProcess::Start(
      dir, FleetYaml(LargeFleet(clusters, "1.11.6", kNodesPerCluster, 0), fleet_options),
      std::chrono::minutes(5));
  if (!sim.ok()) {
    std::fprintf(stderr, "%s\n", std::string(sim.status().message()).c_str());
    return 1;
  }
  const std::vector<SimClusterInfo>& fleet = (*sim)->clusters();

  std::vector<std::unique_ptr<talos::TalosClient>> clients;
  for (const auto& cluster : fleet) {
    auto config = talos::LoadTalosConfig(cluster.talosconfig);
    if (!config.ok()) return 1;
    auto context = config->Context();
    if (!context.ok()) return 1;
    auto client = talos::NewGrpcTalosClient(*context, Env::Default());
    if (!client.ok()) return 1;
    clients.push_back(*std::move(client));
  }
  auto base = Measure();
  const int failed = PollOnce(clients, fleet);
  auto polled = Measure();
  auto polled_cpu = IdleCpu(**sim, options.window_seconds);

  Watches watches;
  const int total = clusters * kNodesPerCluster * kWatchesPerNode;
  const auto started = std::chrono::steady_clock::now();
  StartWatches(clients, fleet, watches);
  const bool all = watches.bootstrapped.WaitFor([total](const int& n) { return n == total; },
                                                std::chrono::minutes(2));
  const double setup_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  auto watched = Measure();
  auto watched_cpu = IdleCpu(**sim, options.window_seconds);
  const int ended_while_idle = watches.ended.load();
  watches.handles.clear();  // cancels each and waits for its end
  auto cancelled = Measure();

  if (!base.ok() || !polled.ok() || !watched.ok() || !cancelled.ok() || !polled_cpu.ok() ||
      !watched_cpu.ok() || !all || failed > 0 || ended_while_idle > 0) {
    std::fprintf(stderr,
                 "run failed: %d reads failed, %d of %d watches bootstrapped, %d ended early\n",
                 failed, watches.bootstrapped.Get(), total, ended_while_idle);
    return 1;
  }
  std::printf(
      "%d clusters of %d nodes, %d watches (%d per node); all bootstrapped in %.0f ms, "
      "%ld events\n",
      clusters, kNodesPerCluster, total, kWatchesPerNode, setup_ms, watches.events.load());
  std::printf("%-10s %8s %12s %8s %8s\n", "state", "threads", "anon MiB", "fds", "tcp");
  std::printf("%s\n%s\n%s\n%s\n", Line("clients", *base).c_str(), Line("polled", *polled).c_str(),
              Line("watched", *watched).c_str(), Line("cancelled", *cancelled).c_str());
  const double anon_per_cluster =
      static_cast<double>(watched->anon_kib - polled->anon_kib) / clusters;
  const double tcp_per_cluster = static_cast<double>(watched->tcp - polled->tcp) / clusters;
  std::printf(
      "watched - polled: %+d threads, %.1f KiB anonymous per cluster (%.2f per watch), "
      "%+.2f fds and %+.2f TCP connections per cluster\n",
      watched->threads - polled->threads, anon_per_cluster, anon_per_cluster * clusters / total,
      static_cast<double>(watched->fds - polled->fds) / clusters, tcp_per_cluster);
  const double window = options.window_seconds;
  std::printf(
      "idle CPU over %d s: this process %.3f ms/s polled, %.3f ms/s watched; the "
      "simulator %.1f ms/s polled, %.1f ms/s watched\n",
      options.window_seconds, polled_cpu->first * 1000 / window, watched_cpu->first * 1000 / window,
      polled_cpu->second * 1000 / window, watched_cpu->second * 1000 / window);
  const std::string fleet_name = fmt::format("{} clusters of 3 nodes, 6 watches each", clusters);
  PrintBenchRow(fmt::format("threads added by {} watches ({})", total, fleet_name),
                "none per watch", fmt::format("{:+d}", watched->threads - polled->threads),
                std::nullopt, "gRPC's callback threads, started by the first watch");
  PrintBenchRow(fmt::format("anonymous memory per cluster for its watches ({})", fleet_name), "",
                fmt::format("{:.1f} KiB", anon_per_cluster), std::nullopt,
                "RssAnon watched − polled, ÷ clusters");
  PrintBenchRow(fmt::format("TCP connections per cluster while watched ({})", fleet_name), "",
                fmt::format("{:.2f}", static_cast<double>(watched->tcp) / clusters), std::nullopt,
                fmt::format("{:.2f} after one poll", static_cast<double>(polled->tcp) / clusters));
  PrintBenchRow(fmt::format("idle CPU of the watching process ({})", fleet_name), "",
                fmt::format("{:.3f} ms/s", watched_cpu->first * 1000 / window), std::nullopt,
                fmt::format("{:.3f} ms/s polled, no watch", polled_cpu->first * 1000 / window));
  clients.clear();
  if (absl::Status st = (*sim)->Stop(); !st.ok()) return 1;
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return 0;
}

}  // namespace
}  // namespace tr::e2e

int main(int argc, char** argv) {
  tr::e2e::Options options;
  const bool read =
      tr::e2e::ReadPositiveFlags(argc, argv, "usage: watch_cost_bench [--clusters N] [--window S]",
                                 [&options](const std::string& name, int value) {
                                   if (name == "--clusters") {
                                     options.fleets = {value};
                                   } else if (name == "--window") {
                                     options.window_seconds = value;
                                   } else {
                                     return false;
                                   }
                                   return true;
                                 });
  if (!read) return 2;
  tr::e2e::RaiseFileLimit();
  int status = 0;
  for (int clusters : options.fleets) status |= tr::e2e::RunFleet(clusters, options);
  return status;
}
