// Benchmark: install ahead (issue 50). Two clusters of 3 control planes + 6 workers in one
// talos-sim, Talos 1.13.2 -> 1.13.9 (the lifecycle path), upgraded by one commit with the same
// maintenance window: `inwin` with `policy.install: inWindow`, `ahead` with `install: ahead`.
// The simulator's pull, install, reboot and boot take what a real node's do (fleet time, set by
// the fleet's `timings:`), scaled by the fleet time scale. The window opens at a whole minute of
// the wall clock (the daemon evaluates windows on the wall clock to the minute, so the issue's
// "a short window each minute of fleet time" cannot be had literally): the first whole minute
// that leaves the ahead cluster time to install on all nine nodes before it.
//
// From the simulator's journal, per mode: each node's window occupancy — from the first entry at
// or after the window's opening that acts on it (a cordon, the start of an install, an upgrade
// or reboot call, an upgrade sequence, going down; see FirstActions) to it being back (up, new
// version, Ready, uncordoned) — its mean and max, in wall seconds and in fleet seconds (÷ the
// time scale); the window's use (its first action on the cluster, a pre-pull included, -> the
// last node back); and the reduction of the mean by `ahead` (goal >= 40 %). The ahead cluster's
// installs before the window are not in its window occupancy. A correctness line per mode: every
// node installed exactly once, rebooted exactly once and booted the new version once; none of
// the ahead cluster's installs in the window, all nine of the inWindow one's.
//
// Usage: install_ahead_bench [--time-scale X (default 0.05)] [--pull 30s] [--install 45s]
//        [--reboot 20s] [--boot 30s]   (the simulator's timings, fleet time)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "tests/bench/bench_support.h"
#include "tests/support/e2e/e2e_world.h"
#include "tests/support/e2e/journal_checks.h"

namespace tr::e2e {
namespace {

using WallClock = std::chrono::system_clock;

struct Options {
  double time_scale = 0.05;
  int pull_s = 30;     // real: tens of seconds for the installer image
  int install_s = 45;  // real: 30-60 s writing the other slot
  // The machine down: Talos reboots by kexec (its Reboot sequence's kexec phase loads the next
  // kernel; skipped only with Secure Boot or a POWERCYCLE), so a kernel's boot to apid, not the
  // firmware's; --reboot 60s or more for a machine that goes through its firmware.
  int reboot_s = 20;
  int boot_s = 30;     // real: Talos' boot sequence, then the kubelet Ready
};

constexpr int kControlPlanes = 3;
constexpr int kWorkers = 6;
constexpr int kNodes = kControlPlanes + kWorkers;
constexpr const char* kFrom = "1.13.2";
constexpr const char* kTo = "1.13.9";
constexpr const char* kKubernetes = "1.35.0";

struct Mode {
  std::string cluster;  // its name in the fleet
  std::string install;  // policy.install
};

const std::vector<Mode> kModes = {{"inwin", "inWindow"}, {"ahead", "ahead"}};

double Seconds(WallClock::duration d) { return std::chrono::duration<double>(d).count(); }

// The window: its opening and the profile's policy line (30 minutes from a whole UTC minute).
struct Window {
  WallClock::time_point opens;
  std::string policy_line;
};

Window WindowAfter(std::chrono::seconds lead) {
  const auto opens = std::chrono::ceil<std::chrono::minutes>(WallClock::now() + lead);
  return {.opens = opens, .policy_line = WindowPolicyLine(opens)};
}

std::map<std::string, ProfileDef> ProfilesAt(const std::string& talos,
                                             const std::string& window_line) {
  std::map<std::string, ProfileDef> profiles;
  for (const Mode& m : kModes) {
    std::vector<std::string> policy = {"install: " + m.install};
    if (!window_line.empty()) policy.push_back(window_line);
    profiles[m.cluster] = AtTalos(talos, policy, kKubernetes);
  }
  return profiles;
}

struct ModeResult {
  std::vector<NodeUpgradeSpan> in_window;     // spans from the window's opening
  std::map<std::string, double> occupancy_s;  // per node, wall
  double mean_s = 0;                          // window occupancy per node, wall
  double max_s = 0;
  double use_s = 0;                  // the window's first action -> the last node back, wall
  double open_s = 0;                 // the window's opening -> its first action, wall
  int nodes_ok = 0;                  // installed once, rebooted once, one new version
  int installs = 0;                  // LifecycleService/Upgrade answered OK since the push
  int reboots = 0;                   // MachineService/Reboot answered OK since the push
  int downs = 0;                     // the simulator's "down" entries since the push
  int window_installs = 0;           // LifecycleService/Upgrade answered OK at or after the opening
  double last_install_before_s = 0;  // the last install before the opening, seconds before it
};

// When the window's first action on each node of `cluster` was, among the entries after
// `after_seq`: an entry that touches it (journal_checks.h) or the start of an install
// ("install" "start …"), since the install's call is journaled when it ends and on the
// lifecycle path it comes before the cordon. The pull right before an install finds the image
// the cluster's pre-pull left (answered at once), and that pre-pull at the window's start is
// the whole cluster's, not a node's: it counts in the window's use.
std::map<std::string, WallClock::time_point> FirstActions(const std::vector<JournalLine>& journal,
                                                          const std::string& cluster,
                                                          uint64_t after_seq) {
  std::map<std::string, WallClock::time_point> first;
  for (const auto& line : journal) {
    if (line.seq <= after_seq || line.cluster != cluster || first.contains(line.node)) continue;
    if (TouchesNode(line) ||
        (!line.call && line.what == "install" && line.detail.starts_with("start "))) {
      first[line.node] = line.time;
    }
  }
  return first;
}

ModeResult Measure(const std::vector<JournalLine>& journal, const std::string& cluster,
                   uint64_t pushed_seq, const Window& window) {
  uint64_t before_window = pushed_seq;
  for (const auto& line : journal) {
    if (line.seq > pushed_seq && line.time < window.opens) before_window = line.seq;
  }
  ModeResult r;
  r.in_window = UpgradeSpans(journal, cluster, before_window);
  const auto first_actions = FirstActions(journal, cluster, before_window);
  WallClock::time_point first = WallClock::time_point::max(), last{};
  std::erase_if(r.in_window, [](const NodeUpgradeSpan& span) {
    return span.version_changes.empty() ||
           !span.version_changes.back().ends_with(std::string("v") + kTo);
  });
  for (const auto& span : r.in_window) {
    const auto found = first_actions.find(span.node);
    const auto began = found != first_actions.end() ? found->second : span.first_time;
    const double busy = Seconds(span.last_time - began);
    r.occupancy_s[span.node] = busy;
    r.mean_s += busy / static_cast<double>(r.in_window.size());
    r.max_s = std::max(r.max_s, busy);
    last = std::max(last, span.last_time);
  }
  for (const auto& line : journal) {
    const bool acts = !line.call && (line.what == "pull" || line.what == "install");
    if (line.seq > before_window && line.cluster == cluster && (acts || TouchesNode(line))) {
      first = std::min(first, line.time);
    }
  }
  r.use_s = Seconds(last - first);
  r.open_s = Seconds(first - window.opens);
  for (const auto& span : UpgradeSpans(journal, cluster, pushed_seq)) {
    int downs = 0;
    for (const auto& line : journal) {
      downs += line.seq > pushed_seq && !line.call && line.cluster == cluster &&
               line.node == span.node && line.what == "down";
    }
    r.nodes_ok += span.upgrade_calls_ok == 1 && span.reboot_calls_ok == 1 && downs == 1 &&
                  span.version_changes.size() == 1;
    r.installs += span.upgrade_calls_ok;
    r.reboots += span.reboot_calls_ok;
    r.downs += downs;
  }
  for (const auto& line : journal) {
    if (line.seq <= pushed_seq || line.cluster != cluster || !IsUpgradeCall(line) ||
        line.code != "OK") {
      continue;
    }
    if (line.seq > before_window) {
      ++r.window_installs;
    } else {
      r.last_install_before_s = Seconds(window.opens - line.time);
    }
  }
  return r;
}

// Waits until every cluster is Ready on `talos` with `commit` applied or has failed; returns
// the failed ones' status messages ("<cluster>: <message>"), empty when all are Ready.
absl::StatusOr<std::string> WaitReadyOrFailed(E2eWorld& world,
                                              const std::vector<std::string>& names,
                                              const std::string& talos, const std::string& commit) {
  std::string checked_tip, failed;
  const bool done = world.WaitUntil(std::chrono::minutes(30), [&] {
    const std::string tip = world.repo().StatusTip();
    if (tip.empty() || tip == checked_tip) return false;
    checked_tip = tip;
    auto all = world.repo().StatusAll(names);
    if (!all.ok()) return false;
    size_t ended = 0;
    failed.clear();
    for (const auto& [name, s] : *all) {
      if (s.phase == core::ClusterPhase::kUpgradeFailed) {
        failed += (failed.empty() ? "" : "; ") + name + ": " + s.message;
        ++ended;
      }
      ended += s.phase == core::ClusterPhase::kReady && s.talos.current == talos &&
               s.desired_commit_applied == commit;
    }
    return ended == names.size();
  });
  if (!done) return absl::DeadlineExceededError("the rollout did not end within 30 minutes");
  return failed;
}

int Run(const Options& options) {
  const std::filesystem::path dir = BenchDirectory("install-ahead");
  if (dir.empty()) return 1;
  const double scale = options.time_scale;
  std::printf(
      "two clusters of %d control planes + %d workers in one talos-sim, Talos %s -> %s, one "
      "commit, the same window; time scale %g; timings (fleet time): pull %d s, install %d s, "
      "reboot %d s, boot %d s\n",
      kControlPlanes, kWorkers, kFrom, kTo, scale, options.pull_s, options.install_s,
      options.reboot_s, options.boot_s);
  std::printf(
      "note: windows are wall-clock minutes (the daemon's granularity), so the window is one "
      "whole-minute window of the wall clock, not a short window each minute of fleet time\n");
  std::fflush(stdout);
  int rc = 0;
  {
    E2eWorld world(dir);
    auto fail = [&](const std::string& what, const absl::Status& st) {
      std::fprintf(stderr, "%s: %s\n%s\n", what.c_str(), std::string(st.message()).c_str(),
                   world.Diagnostics().c_str());
      return 1;
    };
    std::vector<ClusterDef> fleet;
    std::vector<std::string> names;
    for (const Mode& m : kModes) {
      fleet.push_back(MakeCluster(m.cluster, kControlPlanes, kWorkers, kFrom, kKubernetes));
      names.push_back(m.cluster);
    }
    const std::string timings =
        fmt::format("{{image_pull: {}s, install: {}s, reboot: {}s, boot: {}s}}", options.pull_s,
                    options.install_s, options.reboot_s, options.boot_s);
    if (auto st = world.StartFleet(fleet, {.time_scale = scale, .timings = timings}); !st.ok()) {
      return fail("the fleet", st);
    }
    world.PushProfiles(ProfilesAt(kFrom, ""), "initial profiles",
                       {{"reconciler.yaml", RepositoryDefaultsYaml("5m")}});
    if (auto st = world.StartDaemon(); !st.ok()) return fail("the daemon", st);
    if (auto st = WaitAllReady(world, names, kFrom, "", std::chrono::minutes(5)); !st.ok()) {
      return fail("before the change", st);
    }

    // Time for the ahead cluster's pulls and installs, one node at a time, and a margin.
    const auto lead = std::chrono::seconds(
        static_cast<int>(kNodes * (options.pull_s + options.install_s) * scale) + 30);
    const Window window = WindowAfter(lead);
    const uint64_t pushed_seq = LastSeq(world.Journal());
    const auto pushed = WallClock::now();
    const std::string commit =
        world.PushProfiles(ProfilesAt(kTo, window.policy_line), "both: Talos 1.13.9");
    std::printf("pushed; the window (%s) opens in %.1f s\n", window.policy_line.c_str(),
                Seconds(window.opens - pushed));
    std::fflush(stdout);
    absl::StatusOr<std::string> failed = WaitReadyOrFailed(world, names, kTo, commit);
    if (!failed.ok()) return fail("the rollout", failed.status());
    if (!failed->empty()) {
      std::printf(
          "the rollout FAILED, %s; the figures below are of the nodes that were back on "
          "%s in the window\n",
          failed->c_str(), kTo);
      rc = 1;
    }

    const auto& journal = world.Journal();
    std::map<std::string, ModeResult> results;
    for (const Mode& m : kModes) {
      ModeResult r = Measure(journal, m.cluster, pushed_seq, window);
      std::printf(
          "%-8s (%s): window occupancy per node mean %6.2f s wall (%6.1f s fleet), max %6.2f s "
          "(%6.1f s fleet); window's use (its first action -> the last node back) %6.2f s "
          "(%6.1f s fleet), the first action %.2f s after the opening\n",
          m.install.c_str(), m.cluster.c_str(), r.mean_s, r.mean_s / scale, r.max_s,
          r.max_s / scale, r.use_s, r.use_s / scale, r.open_s);
      std::printf("  per node (wall):");
      for (const auto& span : r.in_window) {
        std::printf(" %s %.2f s;", span.node.c_str(), r.occupancy_s[span.node]);
      }
      std::printf("\n");
      std::printf(
          "  correct: %d of %d nodes installed exactly once, rebooted exactly once and booted "
          "the new version once (installs %d, reboot calls %d, went down %d); installs in the "
          "window %d",
          r.nodes_ok, kNodes, r.installs, r.reboots, r.downs, r.window_installs);
      if (r.installs > r.window_installs) {
        std::printf("; the last install before the window ended %.1f s before it opened",
                    r.last_install_before_s);
      }
      std::printf("\n");
      std::fflush(stdout);
      const int window_installs_expected = m.install == "ahead" ? 0 : kNodes;
      if (r.nodes_ok != kNodes || static_cast<int>(r.in_window.size()) != kNodes ||
          r.window_installs != window_installs_expected) {
        std::fprintf(stderr, "%s: the rollout is not the one measured (see above)\n%s",
                     m.cluster.c_str(), Describe(r.in_window).c_str());
        rc = 1;
      }
      PrintBenchRow(
          fmt::format("window occupancy per node, install: {}, mean", m.install), "",
          fmt::format("{:.2f} s ({:.0f} s fleet)", r.mean_s, r.mean_s / scale), std::nullopt,
          fmt::format("max {:.2f} s ({:.0f} s fleet); window's use {:.2f} s ({:.0f} s fleet); "
                      "{} nodes, time scale {}",
                      r.max_s, r.max_s / scale, r.use_s, r.use_s / scale, kNodes, scale));
      results[m.install] = std::move(r);
    }
    if (rc != 0) {
      std::printf("install: ahead's partial figures: %zu of %d nodes measured\n",
                  results["ahead"].in_window.size(), kNodes);
    }
    const double reduction = 1 - results["ahead"].mean_s / results["inWindow"].mean_s;
    const double use_reduction = 1 - results["ahead"].use_s / results["inWindow"].use_s;
    // A failed rollout ends early: its window's use says nothing.
    const std::string use = rc == 0 ? fmt::format("{:.1f} % lower", 100 * use_reduction)
                                    : std::string("not compared (a failed run)");
    std::printf(
        "install: ahead lowers the mean window occupancy per node by %.1f %% (goal >= 40 %%); "
        "the window's use: %s\n",
        100 * reduction, use.c_str());
    PrintBenchRow(
        "window occupancy per node, ahead vs inWindow (mean)", "≥ 40 % lower",
        fmt::format("{:.1f} % lower{}", 100 * reduction, rc == 0 ? "" : " (a failed run)"),
        rc == 0 && reduction >= 0.40,
        fmt::format("window's use {}; pull {} s, install {} s, reboot {} s, boot {} s fleet "
                    "time, scale {}",
                    use, options.pull_s, options.install_s, options.reboot_s, options.boot_s,
                    scale));
  }
  if (rc == 0) std::filesystem::remove_all(dir);
  return rc;
}

// "45s" or "45" -> 45.
int WholeSeconds(const char* text) { return std::atoi(text); }

}  // namespace
}  // namespace tr::e2e

int main(int argc, char** argv) {
  tr::e2e::Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--time-scale") {
      options.time_scale = std::atof(argv[i + 1]);
    } else if (flag == "--pull") {
      options.pull_s = tr::e2e::WholeSeconds(argv[i + 1]);
    } else if (flag == "--install") {
      options.install_s = tr::e2e::WholeSeconds(argv[i + 1]);
    } else if (flag == "--reboot") {
      options.reboot_s = tr::e2e::WholeSeconds(argv[i + 1]);
    } else if (flag == "--boot") {
      options.boot_s = tr::e2e::WholeSeconds(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  return tr::e2e::Run(options);
}
