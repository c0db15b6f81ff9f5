// kill -9 of the daemon at random points of rollouts, again and again: no node is ever
// upgraded twice, and every rollout completes.
#include <cstdlib>
#include <iostream>
#include <random>

#include "fmt/format.h"
#include "tests/e2e/e2e_fixture.h"

namespace tr::e2e {
namespace {

constexpr int kKills = 24;

// One rollout of the test: the target and the path the nodes take to it.
struct Round {
  std::string from;
  std::string to;
  bool lifecycle;
};

// The points a kill follows: a moment after start, or the next journal entry of a kind (the
// daemon killed right after an Upgrade call was answered, right after a node went down, ...),
// or the next status commit (right after an operation was recorded in flight).
enum class Trigger { kDelay, kUpgradeCall, kSequence, kDown, kUp, kReady, kPull, kStatusCommit };
constexpr int kTriggers = 8;

const char* TriggerName(Trigger t) {
  static constexpr const char* kNames[] = {"delay", "upgrade-call", "sequence", "down",
                                           "up",    "kube-ready",   "pull",     "status-commit"};
  return kNames[static_cast<int>(t)];
}

bool Matches(Trigger trigger, const JournalLine& line) {
  switch (trigger) {
    case Trigger::kUpgradeCall:
      return IsUpgradeCall(line) || line.what == "/machine.MachineService/Reboot";
    case Trigger::kSequence:
      return !line.call && line.what == "sequence";
    case Trigger::kDown:
      return !line.call && line.what == "down";
    case Trigger::kUp:
      return !line.call && line.what == "up";
    case Trigger::kReady:
      return !line.call && line.what == "kube-ready";
    case Trigger::kPull:
      return line.call && line.what.ends_with("Pull");
    default:
      return false;
  }
}

class CrashTest : public E2eTest {
 protected:
  // Waits for `trigger` (at most a few seconds), then kills the daemon and starts it again.
  void KillAt(Trigger trigger, std::chrono::milliseconds delay) {
    const uint64_t since = LastSeq(world().Journal());
    const std::string tip = world().repo().StatusTip();
    world().WaitUntil(trigger == Trigger::kDelay ? delay : 5s, [&] {
      if (trigger == Trigger::kDelay) return false;
      if (trigger == Trigger::kStatusCommit) return world().repo().StatusTip() != tip;
      for (const auto& line : world().Journal()) {
        if (line.seq > since && line.cluster == "crash" && Matches(trigger, line)) return true;
      }
      return false;
    });
    world().daemon().Kill();
    ++kills_;
    kill_log_ += fmt::format(" {}", TriggerName(trigger));
    E2E_ASSERT_OK(world().daemon().Start());
  }

  int kills_ = 0;
  std::string kill_log_;
};

// Rollout `index`: two legacy rollouts (below 1.13), then LifecycleService ones within 1.14.
Round NthRound(int index) {
  if (index == 0) return {"1.11.6", "1.12.0", false};
  if (index == 1) return {"1.12.0", "1.13.9", false};
  if (index == 2) return {"1.13.9", "1.14.0", true};
  return {fmt::format("1.14.{}", index - 3), fmt::format("1.14.{}", index - 2), true};
}

TEST_F(CrashTest, KillNineAtRandomPointsNeverUpgradesANodeTwice) {
  // TR_CRASH_SEED replays a red run: the seed is printed at the start of every run.
  const char* fixed_seed = std::getenv("TR_CRASH_SEED");
  const unsigned seed = fixed_seed != nullptr ? static_cast<unsigned>(std::stoul(fixed_seed))
                                              : std::random_device{}();
  std::cerr << fmt::format("crash test seed {} (replay: TR_CRASH_SEED={})\n", seed, seed);
  SCOPED_TRACE(fmt::format("seed {}", seed));
  std::mt19937 random(seed);
  constexpr int kMinRounds = 4, kMaxRounds = 10, kKillsPerRound = kKills / kMinRounds;
  const std::string defaults = RepositoryDefaultsYaml() +
                               "releases:\n  talos: [1.14.0, 1.14.1, 1.14.2, 1.14.3, 1.14.4, " +
                               "1.14.5, 1.14.6, 1.14.7]\n";
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("crash", 3, 2, "1.11.6")}, {.time_scale = 0.02}));
  world().PushProfiles({{"crash", AtTalos("1.11.6")}}, "initial profile",
                       {{"reconciler.yaml", defaults}});
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(world().WaitForReady("crash", "1.11.6", "", 120s).status());

  for (int r = 0; r < kMaxRounds && (r < kMinRounds || kills_ < kKills); ++r) {
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
      const auto trigger = static_cast<Trigger>(random() % kTriggers);
      const std::chrono::milliseconds delay(random() % 1500);
      ASSERT_NO_FATAL_FAILURE(KillAt(trigger, delay));
    }
    E2E_ASSERT_OK(world().WaitForReady("crash", round.to, commit, 180s).status());

    const auto spans = UpgradeSpans(world().Journal(), "crash", since);
    SCOPED_TRACE(
        fmt::format("kills so far {}:{}\njournal spans:\n{}", kills_, kill_log_, Describe(spans)));
    ASSERT_EQ(spans.size(), 5u);
    EXPECT_EQ(OverlapProblem(spans), "");
    for (const auto& span : spans) {
      SCOPED_TRACE(span.node);
      // A call the node accepted just before a kill -9, but that was not recorded yet, is
      // asked again (the node still runs its old boot): the lifecycle install is idempotent and
      // Talos refuses a second legacy sequence. What must never repeat is the upgrade itself:
      // at most one sequence, one reboot, one version change.
      EXPECT_GE(span.upgrade_calls_ok, 1);
      EXPECT_LE(span.upgrade_sequences, 1);
      EXPECT_EQ(span.version_changes,
                std::vector<std::string>{fmt::format("v{} -> v{}", round.from, round.to)});
      if (round.lifecycle) {
        EXPECT_EQ(span.reboot_calls_ok, 1);
      }
    }
  }
  EXPECT_GE(kills_, kKills) << kill_log_;
}

}  // namespace
}  // namespace tr::e2e
