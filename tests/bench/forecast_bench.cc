// Benchmark (issue 51): the drain forecast's duration against a second rollout of the same
// cluster, and what a forecast of a large cluster costs.
//
// 1. A 4-node cluster (1 control plane, 3 workers, one at a time, with a healthy budgeted
//    workload) on the lifecycle path is upgraded once (Talos 1.13.2 -> 1.13.5) by the real
//    daemon against the real talos-sim, which records each node's upgrade duration in the
//    status. `talos-reconciler plan` of the next change (-> 1.13.9), with that status, gives the
//    forecast's range for the drained step; then the change is pushed and the rollout measured,
//    from the first node's first upgrade call to the last node's Kubernetes Ready (journal).
//    Goal: the measured duration within ±25 % of the forecast's (the range's middle).
// 2. The forecast of a cluster of 20,000 pods on 40 nodes with 500 budgets: the CPU time of one
//    play of every drain (core, no I/O), and the process's peak RSS before and after.
//
// Usage: forecast_bench [--time-scale X (default 0.2)]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/disruption_forecast.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tests/bench/bench_row.h"
#include "tests/bench/bench_support.h"
#include "tests/support/e2e/e2e_world.h"
#include "tests/support/e2e/journal_checks.h"
#include "tests/support/process.h"

namespace tr::e2e {
namespace {

using bench::PrintBenchRow;
using Clock = std::chrono::system_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

ClusterDef Cluster() {
  ClusterDef c = MakeCluster("fc", 1, 3, "1.13.2");
  c.extra = R"(    pods:
      - {name: web-a, namespace: shop, node: fc-w-0, labels: {app: web}}
      - {name: web-b, namespace: shop, node: fc-w-1, labels: {app: web}}
      - {name: web-c, namespace: shop, node: fc-w-2, labels: {app: web}}
    pdbs:
      - {name: web, namespace: shop, selector: {app: web}, max_unavailable: 1}
)";
  return c;
}

ProfileDef At(const std::string& talos) {
  return AtTalos(talos, {"settle: 0s", "maxParallelWorkers: 1"});
}

// The forecast's [low, high] seconds of the drained step, from `plan -o json` of the checkout
// `repo` with the statuses under `status`; {-1, -1} when there is none.
std::pair<double, double> ForecastRange(E2eWorld& world, const std::filesystem::path& repo,
                                        const std::filesystem::path& status) {
  const gitsource::testing::ProcessResult plan = gitsource::testing::RunCommand(
      {BuiltBinary("reconciler/talos-reconciler").string(), "plan", repo.string(),
       "--credentials-dir", world.sim().state_dir().string(), "--status", status.string(), "-o",
       "json"});
  const std::string& out = plan.out;
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded()) {
    std::fprintf(stderr, "plan did not print JSON:\n%s%s\n", out.c_str(), plan.err.c_str());
    return {-1, -1};
  }
  const nlohmann::json& range = j["clusters"][0]["drainForecast"]["durationSeconds"];
  if (!range.is_array()) {
    std::fprintf(stderr, "no duration in the forecast:\n%s\n", out.c_str());
    return {-1, -1};
  }
  return {range[0].get<double>(), range[1].get<double>()};
}

int DurationAgainstSecondRollout(double scale) {
  const std::filesystem::path dir = BenchDirectory("forecast");
  if (dir.empty()) return 1;
  int rc = 0;
  {
    E2eWorld world(dir);
    auto fail = [&](const absl::Status& st) { return RunFailed(world, st); };
    auto at_rest = StartAtRest(world, {.fleet = {Cluster()},
                                       .sim = {.time_scale = scale},
                                       .talos = "1.13.2",
                                       .policy = {"settle: 0s", "maxParallelWorkers: 1"},
                                       .files = {{"reconciler.yaml", RepositoryDefaultsYaml("30m")}},
                                       .daemon = [](DaemonOptions& d) {
                                         d.node_poll_interval = "200ms";
                                         d.poll_interval = "1s";
                                       }});
    if (!at_rest.ok()) return fail(at_rest.status());
    const std::string first = world.PushProfiles({{"fc", At("1.13.5")}}, "Talos 1.13.5");
    if (auto st = world.WaitForReady("fc", "1.13.5", first, std::chrono::minutes(20)); !st.ok()) {
      return fail(st.status());
    }
    // The next change, planned with what the first rollout recorded.
    std::filesystem::create_directories(dir / "next/clusters");
    std::filesystem::create_directories(dir / "status/status");
    std::ofstream(dir / "next/clusters/fc.yaml") << ProfileYaml(world.sim().cluster("fc"), At("1.13.9"));
    std::ofstream(dir / "next/reconciler.yaml") << RepositoryDefaultsYaml("30m");
    std::ofstream(dir / "status/status/fc.yaml") << world.repo().StatusText("fc");
    const auto [low, high] = ForecastRange(world, dir / "next", dir / "status");
    if (low < 0) return 1;

    const uint64_t since = LastSeq(world.Journal());
    const std::string second = world.PushProfiles({{"fc", At("1.13.9")}}, "Talos 1.13.9");
    if (auto st = world.WaitForReady("fc", "1.13.9", second, std::chrono::minutes(20)); !st.ok()) {
      return fail(st.status());
    }
    const auto& journal = world.Journal();
    const auto spans = UpgradeSpans(journal, "fc", since);
    Clock::time_point start{}, end{};
    for (const JournalLine& line : journal) {
      if (spans.empty() || line.seq < spans.front().first_seq) continue;
      if (line.cluster != "fc" || line.node.empty()) continue;
      if (start == Clock::time_point{} && line.call) start = line.time;
      if (!line.call && line.what == "kube-ready" && line.seq <= spans.back().last_seq) {
        end = line.time;
      }
    }
    const double measured = Seconds(end - start);
    const double middle = (low + high) / 2;
    const double off = middle > 0 ? (measured - middle) / middle : 1;
    std::printf("4-node rollout (1 control plane, 3 workers), Talos 1.13.5 -> 1.13.9, time scale %g\n",
                scale);
    std::printf("  forecast from the first rollout   %7.1f - %.1f s (middle %.1f s)\n", low, high,
                middle);
    std::printf("  measured second rollout           %7.1f s (%zu nodes)\n", measured,
                spans.size());
    std::printf("  off by                            %+7.1f %%\n", off * 100);
    PrintBenchRow(fmt::format("drain forecast duration vs a second rollout, time scale {}", scale),
                  "within ±25 %", fmt::format("{:+.1f} %", off * 100), off >= -0.25 && off <= 0.25,
                  fmt::format("forecast {:.1f}–{:.1f} s, measured {:.1f} s", low, high, measured));
    if (spans.size() != 4) rc = 1;
  }
  std::filesystem::remove_all(dir);
  return rc;
}

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

long PeakRssKib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

void LargeCluster() {
  const long rss_before = PeakRssKib();
  core::ClusterWorkloads w;
  std::vector<std::vector<std::string>> order;
  for (int n = 0; n < 40; ++n) {
    w.nodes.push_back({fmt::format("n-{}", n), {}});
    order.push_back({w.nodes.back().name});
  }
  for (int i = 0; i < 20000; ++i) {
    core::WorkloadPod pod;
    pod.namespace_name = fmt::format("ns-{}", i % 50);
    pod.name = fmt::format("p-{}", i);
    pod.node = fmt::format("n-{}", i % 40);
    pod.owner_kind = "ReplicaSet";
    pod.labels = {{"app", fmt::format("a-{}", i % 500)}};
    w.pods.push_back(std::move(pod));
  }
  for (int b = 0; b < 500; ++b) {
    w.budgets.push_back({fmt::format("ns-{}", b % 50), fmt::format("b-{}", b),
                         {{"app", fmt::format("a-{}", b)}}, std::nullopt,
                         core::CountOrPercent{1, false}});
  }
  const double cpu = CpuSeconds();
  const core::DrainForecast f = core::ForecastDrains(w, order, false);
  const double took = CpuSeconds() - cpu;
  const long rss_after = PeakRssKib();
  std::printf("forecast of 20000 pods, 40 nodes, 500 budgets: %.2f CPU s, peak RSS %.1f -> %.1f MiB "
              "(%zu nodes)\n",
              took, static_cast<double>(rss_before) / 1024, static_cast<double>(rss_after) / 1024,
              f.nodes.size());
  PrintBenchRow("drain forecast of 20,000 pods on 40 nodes (CPU)", "≤ 2 s",
                fmt::format("{:.2f} s", took), took <= 2.0, "core only, no I/O");
  PrintBenchRow("drain forecast of 20,000 pods on 40 nodes (peak RSS growth)", "≤ 64 MiB",
                fmt::format("{:.1f} MiB", static_cast<double>(rss_after - rss_before) / 1024),
                rss_after - rss_before <= 64 * 1024, "");
}

}  // namespace
}  // namespace tr::e2e

int main(int argc, char** argv) {
  double scale = 0.2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--time-scale") == 0) {
      scale = std::atof(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  tr::e2e::LargeCluster();
  return tr::e2e::DurationAgainstSecondRollout(scale);
}
