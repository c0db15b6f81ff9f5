// kill -9 of the daemon, again and again, at random moments and on chosen journal events of
// both upgrade paths: no node is ever upgraded twice, and every rollout completes.
//
// TR_CRASH_SEED=<n> replays a random run (the seed is printed); TR_CRASH_KILLS=<n> asks for
// that many random kills (default 24; a soak run by hand, e.g. TR_CRASH_KILLS=200, kills at
// every journal event type of both paths many times over).
#include <cstdlib>
#include <iostream>
#include <random>

#include "base/env.h"
#include "fmt/format.h"
#include "tests/e2e/e2e_fixture.h"

namespace tr::e2e {
namespace {

// One rollout of the test: the target and the path the nodes take to it.
struct Round {
  std::string from;
  std::string to;
  bool lifecycle;
};

// A point a kill follows: the next journal entry it matches (after the previous kill).
struct KillPoint {
  const char* name;
  bool (*matches)(const JournalLine& line);
};

bool State(const JournalLine& line, const char* what) { return !line.call && line.what == what; }

// The journal events of a node's upgrade, in the order they come, on both paths: legacy
// (Upgrade; Talos drains, installs and reboots by itself) and lifecycle (pull, install, cordon
// and drain by the reconciler, reboot), and the node coming back.
const std::vector<KillPoint>& JournalKillPoints() {
  static const std::vector<KillPoint> points = {
      {"pull", [](const JournalLine& l) { return l.call && l.what.ends_with("Pull"); }},
      {"upgrade-call",
       [](const JournalLine& l) { return l.what == "/machine.MachineService/Upgrade"; }},
      {"sequence", [](const JournalLine& l) { return State(l, "sequence"); }},
      {"install-start",
       [](const JournalLine& l) { return State(l, "install") && l.detail.starts_with("start"); }},
      {"installed", [](const JournalLine& l) { return State(l, "slot"); }},
      {"cordon", [](const JournalLine& l) { return State(l, "cordon"); }},
      {"evict", [](const JournalLine& l) { return State(l, "evict"); }},
      {"reboot-call",
       [](const JournalLine& l) { return l.what == "/machine.MachineService/Reboot"; }},
      {"down", [](const JournalLine& l) { return State(l, "down"); }},
      {"up", [](const JournalLine& l) { return State(l, "up"); }},
      {"kube-ready", [](const JournalLine& l) { return State(l, "kube-ready"); }},
      {"uncordon", [](const JournalLine& l) { return State(l, "uncordon"); }},
  };
  return points;
}

class CrashTest : public E2eTest {
 protected:
  // Waits (at most `timeout`) for the next journal entry of `cluster` matching `point` (or,
  // without one, for `delay` or the next status commit), then kills the daemon and starts it
  // again. True when the awaited event came.
  bool KillAt(const std::string& cluster, const KillPoint* point, std::chrono::milliseconds delay,
              bool on_status_commit = false,
              std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const uint64_t since = LastSeq(world().Journal());
    const std::string tip = world().repo().StatusTip();
    const bool fired = world().WaitUntil(point || on_status_commit ? timeout : delay, [&] {
      if (on_status_commit) return world().repo().StatusTip() != tip;
      if (point == nullptr) return false;
      for (const auto& line : world().Journal()) {
        if (line.seq > since && line.cluster == cluster && point->matches(line)) return true;
      }
      return false;
    });
    world().daemon().Kill();
    ++kills_;
    kill_log_ += fmt::format(" {}", point ? point->name : on_status_commit ? "status" : "delay");
    const absl::Status started = world().daemon().Start();
    EXPECT_TRUE(started.ok()) << started;
    return fired;
  }

  // Every node of `cluster` went from `from` to `to` exactly once since `since`: one version
  // change, at most one upgrade sequence, and on the lifecycle path one reboot.
  void ExpectEachUpgradedOnce(const std::string& cluster, uint64_t since, const Round& round,
                              size_t nodes) {
    const auto spans = UpgradeSpans(world().Journal(), cluster, since);
    SCOPED_TRACE(
        fmt::format("kills {}:{}\njournal spans:\n{}", kills_, kill_log_, Describe(spans)));
    ASSERT_EQ(spans.size(), nodes);
    EXPECT_EQ(OverlapProblem(spans), "");
    for (const auto& span : spans) {
      SCOPED_TRACE(span.node);
      // A call accepted just before a kill but not yet recorded may be asked again (the node
      // still runs its old boot): the install is repeatable, Talos refuses a second legacy
      // sequence. A kill during the call cancels it on the node's side while the node goes on
      // with the upgrade; the daemon then only follows it. What never repeats is the upgrade.
      EXPECT_GE(span.upgrade_calls_ok + span.upgrade_calls_cancelled, 1);
      EXPECT_LE(span.upgrade_sequences, 1);
      EXPECT_EQ(span.version_changes,
                std::vector<std::string>{fmt::format("v{} -> v{}", round.from, round.to)});
      if (round.lifecycle) {
        EXPECT_EQ(span.reboot_calls_ok, 1);
      }
    }
  }

  // Waits until `cluster` is Ready on `round.to` with `commit` applied; fails at once when it
  // halts instead.
  void ExpectReady(const std::string& cluster, const Round& round, const std::string& commit,
                   std::chrono::milliseconds timeout = std::chrono::seconds(180)) {
    auto status = world().WaitForStatus(
        cluster,
        [&](const core::ClusterStatus& s) {
          return s.phase == core::ClusterPhase::kUpgradeFailed ||
                 (s.phase == core::ClusterPhase::kReady && s.talos.current == round.to &&
                  s.desired_commit_applied == commit);
        },
        timeout);
    ASSERT_TRUE(status.ok()) << status.status() << "\nkills:" << kill_log_;
    EXPECT_EQ(PhaseName(*status), "Ready") << Summary(*status) << "\nkills:" << kill_log_;
  }

  int kills_ = 0;
  std::string kill_log_;
};

#ifndef TR_ASAN
int EnvInt(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::atoi(text) : fallback;
}

// Rollout `index`: two legacy rollouts (below 1.13), then LifecycleService ones within 1.14.
Round NthRound(int index) {
  if (index == 0) return {"1.11.6", "1.12.0", false};
  if (index == 1) return {"1.12.0", "1.13.9", false};
  if (index == 2) return {"1.13.9", "1.14.0", true};
  return {fmt::format("1.14.{}", index - 3), fmt::format("1.14.{}", index - 2), true};
}

// The repository defaults with a release catalog that lists every 1.14 patch a run reaches.
std::string DefaultsWithReleases(int rounds) {
  std::string releases;
  for (int patch = 0; patch <= std::max(rounds - 2, 7); ++patch) {
    releases += fmt::format("{}1.14.{}", patch == 0 ? "" : ", ", patch);
  }
  return RepositoryDefaultsYaml() + "releases:\n  talos: [" + releases + "]\n";
}

// 24 kills over at least 4 rollouts by default; TR_CRASH_KILLS asks for more. Registered in the
// plain pass only (TR_ASAN, defined by CMake for the sanitizer pass), for the test time budget:
// there each restart costs several times more, and KillAtEveryJournalEventOfBothUpgradePaths
// below already reaches every kill point under the sanitizers.
constexpr int kDefaultKills = 24, kMinRounds = 4;

TEST_F(CrashTest, KillNineAtRandomPointsNeverUpgradesANodeTwice) {
  const int kills_wanted = std::max(1, EnvInt("TR_CRASH_KILLS", kDefaultKills));
  const unsigned seed =
      std::getenv("TR_CRASH_SEED") != nullptr
          ? static_cast<unsigned>(std::strtoul(std::getenv("TR_CRASH_SEED"), nullptr, 10))
          : static_cast<unsigned>(Env::Default().Uniform() * 4294967296.0);
  std::cerr << "crash test: seed " << seed << " (replay with TR_CRASH_SEED=" << seed << "), "
            << kills_wanted << " kills\n";
  RecordProperty("seed", std::to_string(seed));
  SCOPED_TRACE(fmt::format("seed {} (TR_CRASH_SEED={} replays it)", seed, seed));
  std::mt19937 random(seed);
  constexpr int kKillsPerRound = 6;
  const int max_rounds = std::max(10, kills_wanted / kKillsPerRound + 4);
  const auto& points = JournalKillPoints();
  const int choices = static_cast<int>(points.size()) + 2;  // + a moment, + a status commit
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("crash", 3, 2, "1.11.6")}, {.time_scale = 0.02}));
  world().PushProfiles({{"crash", AtTalos("1.11.6")}}, "initial profile",
                       {{"reconciler.yaml", DefaultsWithReleases(max_rounds)}});
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(world().WaitForReady("crash", "1.11.6", "", 120s).status());

  int rounds = 0;
  for (int r = 0; r < max_rounds && (r < kMinRounds || kills_ < kills_wanted); ++r, ++rounds) {
    const Round round = NthRound(r);
    SCOPED_TRACE(fmt::format("rollout {} -> {}", round.from, round.to));
    const uint64_t since = LastSeq(world().Journal());
    const std::string commit = world().PushProfiles({{"crash", AtTalos(round.to)}},
                                                    fmt::format("crash: Talos {}", round.to));
    auto done = [&] {
      auto status = world().repo().Status("crash");
      return status.ok() && status->phase == core::ClusterPhase::kReady &&
             status->talos.current == round.to && status->desired_commit_applied == commit;
    };
    for (int k = 0; k < kKillsPerRound && !done(); ++k) {
      const int choice = static_cast<int>(random() % choices);
      const std::chrono::milliseconds delay(random() % 1500);
      const KillPoint* point = choice < static_cast<int>(points.size()) ? &points[choice] : nullptr;
      KillAt("crash", point, delay, choice == choices - 1);
    }
    ASSERT_NO_FATAL_FAILURE(ExpectReady("crash", round, commit));
    ASSERT_NO_FATAL_FAILURE(ExpectEachUpgradedOnce("crash", since, round, 5));
  }
  std::cerr << fmt::format("crash test: seed {}: {} kills survived over {} rollouts:{}\n", seed,
                           kills_, rounds, kill_log_);
  EXPECT_GE(kills_, std::min(kills_wanted, kDefaultKills)) << kill_log_;
}
#endif  // TR_ASAN

// The reproduction of a kill during a lifecycle install: the install keeps running on the
// node, and the restarted reconciler must wait for it rather than halt on Talos' "another
// installation/upgrade is already in progress". The install takes 1.8 s at this time scale,
// longer than the restart.
TEST_F(CrashTest, KillDuringALifecycleInstallWaitsForItAndUpgradesEachNodeOnce) {
  // The install lasts 4.5 s (30 s of fleet time at 0.15): a restart under a sanitizer on a loaded
  // machine still meets it running (at 1.2 s, the default, it sometimes did not).
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("life", 1, 1, "1.13.9", "1.34.1")},
                                   {.time_scale = 0.15, .timings = "{install: 30s}"}));
  world().PushProfiles({{"life", AtTalos("1.13.9")}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon([](DaemonOptions& o) { o.node_poll_interval = "200ms"; }));
  E2E_ASSERT_OK(world().WaitForReady("life", "1.13.9", "", 60s).status());
  const uint64_t since = LastSeq(world().Journal());
  const Round round{"1.13.9", "1.14.0", true};
  const std::string commit = world().PushProfiles({{"life", AtTalos("1.14.0")}}, "life: 1.14.0");
  const KillPoint* install_start = &JournalKillPoints()[3];
  ASSERT_STREQ(install_start->name, "install-start");
  // Once on the worker's install, once on the control plane's.
  EXPECT_TRUE(KillAt("life", install_start, {}, false, 60s));
  EXPECT_TRUE(KillAt("life", install_start, {}, false, 60s));
  ASSERT_NO_FATAL_FAILURE(ExpectReady("life", round, commit, 90s));
  ASSERT_NO_FATAL_FAILURE(ExpectEachUpgradedOnce("life", since, round, 2));
  EXPECT_GE(CountCalls(world().Journal(), "life", "LifecycleService/Upgrade", "FAILED_PRECONDITION",
                       since),
            1)
      << "no restart met the install still running: the reproduction did not reproduce";
}

// A kill right after each journal event of a node's upgrade, on both paths, in the order they
// come (on the worker, or on the control plane after it): every kill point is met.
TEST_F(CrashTest, KillAtEveryJournalEventOfBothUpgradePaths) {
  // At this time scale the steps a node takes by itself (legacy drain, install, reboot) outlast
  // a restart; an event a node passed while the daemon restarted is met on the next node.
  ClusterDef cluster = MakeCluster("every", 1, 1, "1.12.0");
  cluster.extra =
      "    pods:\n"
      "      - {name: web-1, namespace: default, node: every-w-0, labels: {app: web}}\n"
      "      - {name: web-2, namespace: default, node: every-cp-0, labels: {app: web}}\n";
  E2E_ASSERT_OK(world().StartFleet({cluster}, {.time_scale = 0.1}));
  world().PushProfiles({{"every", AtTalos("1.12.0")}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(world().WaitForReady("every", "1.12.0", "", 60s).status());
  const std::map<bool, std::vector<std::string>> path_points = {
      // Talos cordons as its sequence starts, the Upgrade call is journaled as it returns, and
      // the node goes down as soon as the slot is written: those come in pairs.
      {false, {"sequence", "upgrade-call", "down", "up", "kube-ready"}},  // no pre-pull below 1.13
      {true,
       {"pull", "install-start", "installed", "cordon", "evict", "reboot-call", "down", "up",
        "kube-ready", "uncordon"}}};
  for (const Round& round : {Round{"1.12.0", "1.13.9", false}, Round{"1.13.9", "1.14.0", true}}) {
    SCOPED_TRACE(fmt::format("rollout {} -> {}", round.from, round.to));
    const uint64_t since = LastSeq(world().Journal());
    const std::string commit =
        world().PushProfiles({{"every", AtTalos(round.to)}}, "every: " + round.to);
    for (const std::string& name : path_points.at(round.lifecycle)) {
      const KillPoint* point = nullptr;
      for (const KillPoint& p : JournalKillPoints()) {
        if (p.name == name) point = &p;
      }
      ASSERT_NE(point, nullptr) << name;
      EXPECT_TRUE(KillAt("every", point, {}, false, 20s)) << "no " << name << " came";
    }
    ASSERT_NO_FATAL_FAILURE(ExpectReady("every", round, commit, 60s));
    ASSERT_NO_FATAL_FAILURE(ExpectEachUpgradedOnce("every", since, round, 2));
  }
}

// policy.install: ahead, killed at each step of both of its phases: while the nodes are
// installed ahead (no window set, so the reboots follow the installs at once) and while each
// is drained and rebooted. Every node reboots once, onto the target, and the window phase never
// installs again; an install is repeated only when a kill fell between its answer and its record.
TEST_F(CrashTest, KillDuringBothPhasesOfAnInstallAheadRebootsEachNodeOnce) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("ahead", 1, 2, "1.13.9", "1.34.1")},
                                   {.time_scale = 0.1}));
  world().PushProfiles({{"ahead", AtTalos("1.13.9", {"install: ahead"})}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(world().WaitForReady("ahead", "1.13.9", "", 60s).status());
  const uint64_t since = LastSeq(world().Journal());
  const Round round{"1.13.9", "1.14.0", true};
  const std::string commit =
      world().PushProfiles({{"ahead", AtTalos("1.14.0", {"install: ahead"})}}, "ahead: 1.14.0");
  for (const char* name : {"install-start", "installed", "cordon", "reboot-call", "down", "up"}) {
    const KillPoint* point = nullptr;
    for (const KillPoint& p : JournalKillPoints()) {
      if (std::string(p.name) == name) point = &p;
    }
    ASSERT_NE(point, nullptr) << name;
    EXPECT_TRUE(KillAt("ahead", point, {}, false, 30s)) << "no " << name << " came";
  }
  ASSERT_NO_FATAL_FAILURE(ExpectReady("ahead", round, commit, 90s));
  EXPECT_EQ(InstallAheadProblem(world().Journal(), "ahead", since, 3, "1.13.9", "1.14.0"), "")
      << "kills " << kills_ << ":" << kill_log_;
}

}  // namespace
}  // namespace tr::e2e
