// Benchmark: the reconciler's overhead on top of the nodes' own upgrade time, for a 5-node
// cluster (3 control planes, 2 workers) upgraded from Talos 1.11.6 to 1.12.0 (legacy path) by a
// pushed commit. The real talos-reconciler daemon runs against the real talos-sim binary and a
// git daemon on loopback, exactly as in the end-to-end tests.
//
//   wall       = from the push returning to the status branch saying Ready on 1.12.0
//   node time  = per node, what the simulated machine itself spends: the Upgrade call's image
//                pull, drain and install (the simulator's timings × time scale) plus, from the
//                journal, going down → back up → Kubernetes Ready
//   ratio      = wall ÷ Σ node time (goal ≤ 1.03)
//   overhead per node upgrade = (wall − Σ node time) ÷ nodes (goal ≤ 0.25 s)
//
// at each time scale asked for (default: 1, then 0.2),
// and where the rest goes: noticing the commit, pre-flight (pre-pull, etcd snapshot), the gaps
// between nodes (noticing a node is back, status commits), the end. Prints the daemon's CPU time
// and peak RSS too.
//
// The push is followed by its webhook (a signed GitHub push delivery), as a forge sends it, and
// the daemon polls the repository only hourly: a deployment with webhooks
// (docs/pull-requests.md) needs no more. With
// `--poll-interval`, no webhook is sent and the daemon notices the commit on that poll instead.
//
// Usage: rollout_overhead_bench [--time-scale X (1: the simulator's realistic timings, 30 s per
//        node; repeat the flag for several runs)] [--node-poll-interval 200ms]
//        [--poll-interval D (no webhook; the repository polled every D)]
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "fmt/format.h"
#include "tests/bench/bench_support.h"
#include "tests/bench/push_webhook.h"
#include "tests/support/e2e/e2e_world.h"
#include "tests/support/e2e/journal_checks.h"
#include "tests/support/e2e/process_usage.h"

namespace tr::e2e {
namespace {

using Clock = std::chrono::system_clock;
using Seconds = std::chrono::duration<double>;

struct Options {
  double time_scale = 1.0;
  std::string node_poll_interval = "200ms";
  std::string poll_interval;  // empty: webhook, repository polled hourly
};

// The simulator's default timings (docs/talos-sim.md, "Fleet file"), fleet seconds.
constexpr double kImagePull = 4, kDrain = 2, kInstall = 8;

double ToSeconds(Clock::duration d) { return Seconds(d).count(); }

// A node's own upgrade, as the simulated machine spends it: from the start of the Upgrade call
// (its pull, drain and install take the simulator's timings × scale before the node goes down)
// through down → up → Kubernetes Ready (journal).
struct NodeTime {
  std::string node;
  Clock::time_point start;
  Clock::time_point end;
  double seconds() const { return ToSeconds(end - start); }
};

NodeTime OwnTime(const std::vector<JournalLine>& journal, const NodeUpgradeSpan& span,
                 double scale) {
  NodeTime t{.node = span.node, .start = {}, .end = {}};
  for (const auto& line : journal) {
    if (line.seq < span.first_seq || line.seq > span.last_seq || line.node != span.node) continue;
    if (!line.call && line.what == "down" && t.start == Clock::time_point{}) t.start = line.time;
    if (!line.call && line.what == "kube-ready") t.end = line.time;
  }
  t.start -= std::chrono::duration_cast<Clock::duration>(
      Seconds((kImagePull + kDrain + kInstall) * scale));
  return t;
}

int Run(const Options& options) {
  const std::filesystem::path dir = BenchDirectory("overhead");
  if (dir.empty()) return 1;
  int rc = 0;
  {
    E2eWorld world(dir);
    auto fail = [&](const absl::Status& st) { return RunFailed(world, st); };
    std::optional<PushWebhook> hook;
    auto at_rest = StartAtRest(
        world, {.fleet = {MakeCluster("bench", 3, 2, "1.11.6")},
                .sim = {.time_scale = options.time_scale, .refuse_connections_while_down = false},
                .talos = "1.11.6",
                .files = {{"reconciler.yaml", RepositoryDefaultsYaml("30m")}},
                .daemon = [&](DaemonOptions& d) {
                  d.node_poll_interval = options.node_poll_interval;
                  d.poll_interval = options.poll_interval.empty() ? "1h" : options.poll_interval;
                  if (options.poll_interval.empty()) hook = ListenForPushWebhooks(world, dir, d);
                }});
    if (!at_rest.ok()) return fail(at_rest.status());
    const uint64_t since = LastSeq(world.Journal());
    const std::string commit = world.PushProfiles({{"bench", AtTalos("1.12.0")}}, "Talos 1.12.0");
    const auto pushed = Clock::now();
    if (hook) {
      if (absl::Status st = hook->Send(commit, "bench-push"); !st.ok()) return fail(st);
    }
    const auto cpu_before = ReadProcessUsage(world.daemon().pid());
    if (auto st = world.WaitForReady("bench", "1.12.0", commit, std::chrono::minutes(30));
        !st.ok()) {
      return fail(st.status());
    }
    const auto ready = Clock::now();
    const auto usage = ReadProcessUsage(world.daemon().pid());

    const auto& journal = world.Journal();
    const auto spans = UpgradeSpans(journal, "bench", since);
    // Pre-pull calls are journaled when they end, each after the simulated pull time.
    const auto pull =
        std::chrono::duration_cast<Clock::duration>(Seconds(kImagePull * options.time_scale));
    Clock::time_point first_call{}, last_pull{};
    int pulls = 0;
    for (const auto& line : journal) {
      if (line.seq > since && line.call && line.cluster == "bench" && line.what.ends_with("Pull") &&
          (spans.empty() || line.seq < spans.front().first_seq)) {
        if (pulls++ == 0) first_call = line.time - pull;
        last_pull = line.time;
      }
    }
    std::printf(
        "rollout of 5 nodes (3 control planes, 2 workers), Talos 1.11.6 -> 1.12.0, "
        "time scale %g, node poll %s, %s\n",
        options.time_scale, options.node_poll_interval.c_str(),
        hook ? "push webhook (repository poll 1h)"
             : ("repository poll " + options.poll_interval + ", no webhook").c_str());
    std::vector<NodeTime> times;
    double nodes = 0, gaps = 0;
    for (const auto& span : spans) {
      times.push_back(OwnTime(journal, span, options.time_scale));
      nodes += times.back().seconds();
      if (times.size() > 1) gaps += ToSeconds(times.back().start - times[times.size() - 2].end);
      std::printf("  node %-10s own upgrade time %6.2f s\n", span.node.c_str(),
                  times.back().seconds());
    }
    const double wall = ToSeconds(ready - pushed);
    std::printf("wall, push -> Ready on the status branch   %8.2f s\n", wall);
    std::printf("sum of the nodes' own upgrade time         %8.2f s (simulator nominal %.2f s)\n",
                nodes, 5 * 30 * options.time_scale);
    const double per_node = (wall - nodes) / static_cast<double>(std::max<size_t>(1, times.size()));
    std::printf("overhead ratio (goal <= 1.03)              %8.3f\n", wall / nodes);
    std::printf("overhead per node upgrade (goal <= 0.25 s) %8.2f s\n", per_node);
    PrintBenchRow(fmt::format("5-node rollout wall ÷ the nodes' own upgrade time, time scale {}",
                              options.time_scale),
                  "≤ 1.03", fmt::format("{:.3f}", wall / nodes), wall / nodes <= 1.03,
                  fmt::format("{:.2f} s overhead", wall - nodes));
    PrintBenchRow(fmt::format("overhead per node upgrade, time scale {}", options.time_scale),
                  "≤ 0.25 s", fmt::format("{:.2f} s", per_node), per_node <= 0.25, "");
    std::printf("the overhead, %.2f s:\n", wall - nodes);
    if (!times.empty() && pulls == 0) {
      // No pre-pull (nodes below 1.13): the push is followed by the first node's Upgrade.
      std::printf("  push -> first node's Upgrade call        %8.2f s (no pre-pull)\n",
                  ToSeconds(times.front().start - pushed));
    } else if (!times.empty()) {
      std::printf("  push -> first pre-pull call starts       %8.2f s\n",
                  ToSeconds(first_call - pushed));
      std::printf("  pre-flight -> first node's Upgrade call  %8.2f s\n",
                  ToSeconds(times.front().start - first_call));
      std::printf("    of which pre-pulling on %d nodes       %8.2f s (one pull takes %.2f s)\n",
                  pulls, ToSeconds(last_pull - first_call), kImagePull * options.time_scale);
    }
    if (!times.empty()) {
      std::printf("  between nodes (%zu gaps; snapshot, verify, %8.2f s\n", times.size() - 1, gaps);
      std::printf("    status commits, node poll)\n");
      std::printf("  last node Ready -> Ready on status branch %7.2f s\n",
                  ToSeconds(ready - times.back().end));
    }
    if (usage.ok() && cpu_before.ok()) {
      std::printf("daemon: %.2f CPU s during the rollout, %.2f CPU s in all, peak RSS %.1f MiB\n",
                  usage->cpu_seconds - cpu_before->cpu_seconds, usage->cpu_seconds,
                  static_cast<double>(usage->peak_rss_kib) / 1024);
    }
    if (spans.size() != 5) {
      std::fprintf(stderr, "expected 5 nodes upgraded, saw %zu\n", spans.size());
      rc = 1;
    }
  }
  std::filesystem::remove_all(dir);
  return rc;
}

}  // namespace
}  // namespace tr::e2e

int main(int argc, char** argv) {
  tr::e2e::Options options;
  std::vector<double> scales;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--time-scale") == 0) {
      scales.push_back(std::atof(argv[i + 1]));
    } else if (std::strcmp(argv[i], "--node-poll-interval") == 0) {
      options.node_poll_interval = argv[i + 1];
    } else if (std::strcmp(argv[i], "--poll-interval") == 0) {
      options.poll_interval = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (scales.empty()) scales = {1.0, 0.2};
  int rc = 0;
  for (double scale : scales) {
    options.time_scale = scale;
    rc |= tr::e2e::Run(options);
  }
  return rc;
}
