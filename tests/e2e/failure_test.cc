// Rollouts that must stop: a node that never returns, a node that comes back on its old version
// (and stays halted across a restart), a bump reverted mid-rollout, an unhealthy etcd, and a
// broken profile beside a good one.
#include <algorithm>

#include "fmt/format.h"
#include "tests/e2e/e2e_fixture.h"

namespace tr::e2e {
namespace {

using core::ClusterPhase;

constexpr auto kFailureTimeout = 120s;

// Pushes the initial profiles, starts the daemon and waits until each cluster has a status
// for that commit.
void StartWith(E2eWorld& world, const std::map<std::string, ProfileDef>& profiles) {
  const std::string commit = world.PushProfiles(profiles, "initial profiles");
  E2E_ASSERT_OK(world.StartDaemon());
  for (const auto& [cluster, profile] : profiles) {
    E2E_ASSERT_OK(
        world
            .WaitForStatus(
                cluster,
                [&](const core::ClusterStatus& s) { return s.desired_commit_attempted == commit; },
                kFailureTimeout)
            .status());
  }
}

// Waits until the daemon has made `count` more calls to the cluster's nodes after `since`: it
// kept reconciling (observing) the cluster. False at the deadline.
bool WaitForMoreCalls(E2eWorld& world, const std::string& cluster, uint64_t since, int count) {
  return world.WaitUntil(60s, [&] {
    const auto& journal = world.Journal();
    return std::count_if(journal.begin(), journal.end(), [&](const JournalLine& line) {
             return line.seq > since && line.call && line.cluster == cluster;
           }) >= count;
  });
}

bool Names(const std::string& text, const std::string& node) {
  return text.find(node) != std::string::npos;
}

// The rollout failed on the first node it touched and stayed there: UpgradeFailed, the failure
// and the messages name that node, and no other node was touched afterwards while the daemon
// kept reconciling.
void ExpectHaltedOnFirstNode(E2eWorld& world, const std::string& cluster, uint64_t since,
                             const core::ClusterStatus& failed) {
  const auto touched = TouchedNodes(world.Journal(), cluster, since);
  ASSERT_FALSE(touched.empty());
  const std::string& node = touched.front();
  EXPECT_EQ(failed.phase, ClusterPhase::kUpgradeFailed);
  EXPECT_EQ(failed.talos.state, core::ComponentState::kFailed);
  ASSERT_TRUE(failed.rollout.failure.has_value());
  EXPECT_EQ(failed.rollout.failure->node, node);
  EXPECT_TRUE(Names(failed.rollout.failure->message, node)) << failed.rollout.failure->message;
  EXPECT_TRUE(Names(failed.message, node)) << failed.message;
  EXPECT_TRUE(Names(failed.talos.message, node)) << failed.talos.message;

  EXPECT_TRUE(WaitForMoreCalls(world, cluster, LastSeq(world.Journal()), 10))
      << "the daemon stopped reconciling " << cluster;
  EXPECT_EQ(TouchedNodes(world.Journal(), cluster, since), std::vector<std::string>{node})
      << Describe(UpgradeSpans(world.Journal(), cluster, since));
  auto still = world.repo().Status(cluster);
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(still->phase, ClusterPhase::kUpgradeFailed) << Summary(*still);
}

absl::StatusOr<core::ClusterStatus> WaitForPhase(E2eWorld& world, const std::string& cluster,
                                                 ClusterPhase phase, const std::string& commit) {
  return world.WaitForStatus(
      cluster,
      [&](const core::ClusterStatus& s) {
        return s.phase == phase && s.desired_commit_attempted == commit;
      },
      kFailureTimeout);
}

TEST_F(E2eTest, NodeThatNeverReturnsFailsTheRolloutAndNothingElseIsTouched) {
  ClusterDef cluster = MakeCluster("stuck", 1, 3, "1.11.6");
  for (auto& node : cluster.nodes) {
    if (!node.control_plane) node.faults = "[{kind: never_returns, count: 1}]";
  }
  E2E_ASSERT_OK(world().StartFleet({cluster}));
  const std::vector<std::string> policy = {"nodeTimeout: 3s"};
  ASSERT_NO_FATAL_FAILURE(StartWith(world(), {{"stuck", AtTalos("1.11.6", policy)}}));
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit =
      world().PushProfiles({{"stuck", AtTalos("1.12.0", policy)}}, "stuck: Talos 1.12.0");
  core::ClusterStatus failed;
  E2E_ASSERT_OK_AND_ASSIGN(failed,
                           WaitForPhase(world(), "stuck", ClusterPhase::kUpgradeFailed, commit));
  ExpectHaltedOnFirstNode(world(), "stuck", since, failed);
}

TEST_F(E2eTest, BootFailureBackOnTheOldVersionFailsTheRollout) {
  ClusterDef cluster = MakeCluster("fallback", 1, 2, "1.11.6");
  for (auto& node : cluster.nodes) {
    if (!node.control_plane) node.faults = "[{kind: boot_failure, count: 1}]";
  }
  E2E_ASSERT_OK(world().StartFleet({cluster}));
  ASSERT_NO_FATAL_FAILURE(StartWith(world(), {{"fallback", AtTalos("1.11.6")}}));
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit =
      world().PushProfiles({{"fallback", AtTalos("1.12.0")}}, "fallback: Talos 1.12.0");
  core::ClusterStatus failed;
  E2E_ASSERT_OK_AND_ASSIGN(failed,
                           WaitForPhase(world(), "fallback", ClusterPhase::kUpgradeFailed, commit));
  ExpectHaltedOnFirstNode(world(), "fallback", since, failed);
  // The node rebooted and came back, on the version it ran before.
  const auto spans = UpgradeSpans(world().Journal(), "fallback", since);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_TRUE(spans[0].version_changes.empty()) << Describe(spans);
  ASSERT_TRUE(failed.rollout.failure.has_value());
  EXPECT_TRUE(Names(failed.rollout.failure->message, "1.11.6")) << failed.rollout.failure->message;

  // The halt is on the status branch, so a restarted daemon keeps it: the node that fell back
  // is not asked again (its fault fired once, so a second upgrade would boot and show as a
  // version change), nor is any other node.
  const std::string node = failed.rollout.failure->node;
  world().daemon().Kill();
  E2E_ASSERT_OK(world().daemon().Start());
  EXPECT_TRUE(WaitForMoreCalls(world(), "fallback", LastSeq(world().Journal()), 12))
      << "the restarted daemon did not reconcile fallback";
  const auto& journal = world().Journal();
  EXPECT_EQ(CountCalls(journal, "fallback", "MachineService/Upgrade", "", since), 1);
  const auto after = UpgradeSpans(journal, "fallback", since);
  ASSERT_EQ(after.size(), 1u) << Describe(after);
  EXPECT_EQ(after[0].node, node);
  EXPECT_TRUE(after[0].version_changes.empty()) << Describe(after);
  auto still = world().repo().Status("fallback");
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(still->phase, ClusterPhase::kUpgradeFailed) << Summary(*still);
  ASSERT_TRUE(still->rollout.failure.has_value());
  EXPECT_EQ(still->rollout.failure->node, node);
}

// The commit that bumped Talos is reverted while the first node reboots into the new version:
// that node is finished (cut short, it would be left half-upgraded), no other node starts, none
// is downgraded, and the cluster rests Blocked naming the node that runs the newer version.
// Plain pass only, for the time budget (the revert is tested in both passes in tests/core).
#ifndef TR_ASAN
TEST_F(E2eTest, RevertedBumpFinishesTheNodeInFlightThenBlocksNamingIt) {
  // A reboot of 4 s real time leaves the daemon (polling the repository every second) ample
  // time to see the revert while the node is down.
  E2E_ASSERT_OK(
      world().StartFleet({MakeCluster("revert", 1, 2, "1.11.6")}, {.timings = "{reboot: 400s}"}));
  ASSERT_NO_FATAL_FAILURE(StartWith(world(), {{"revert", AtTalos("1.11.6")}}));
  const uint64_t since = LastSeq(world().Journal());

  world().PushProfiles({{"revert", AtTalos("1.12.0")}}, "revert: Talos 1.12.0");
  ASSERT_TRUE(world().WaitUntil(kFailureTimeout, [&] {
    return CountCalls(world().Journal(), "revert", "MachineService/Upgrade", "OK", since) > 0;
  }));
  const std::string revert =
      world().PushProfiles({{"revert", AtTalos("1.11.6")}}, "Revert \"revert: Talos 1.12.0\"");
  const std::string node = TouchedNodes(world().Journal(), "revert", since).at(0);

  core::ClusterStatus finishing;
  E2E_ASSERT_OK_AND_ASSIGN(finishing, world().WaitForStatus(
                                          "revert",
                                          [&](const core::ClusterStatus& s) {
                                            return s.desired_commit_attempted == revert &&
                                                   Names(s.message,
                                                         "finishing the upgrade of " + node);
                                          },
                                          kFailureTimeout));
  core::ClusterStatus blocked;
  E2E_ASSERT_OK_AND_ASSIGN(blocked,
                           WaitForPhase(world(), "revert", ClusterPhase::kBlocked, revert));
  EXPECT_TRUE(Names(blocked.message, "a downgrade is not performed: " + node +
                                         " (1.12.0) runs Talos newer than the desired 1.11.6"))
      << blocked.message;

  EXPECT_TRUE(WaitForMoreCalls(world(), "revert", LastSeq(world().Journal()), 10));
  const auto& journal = world().Journal();
  const auto spans = UpgradeSpans(journal, "revert", since);
  ASSERT_EQ(spans.size(), 1u) << Describe(spans);
  EXPECT_EQ(spans[0].node, node);
  EXPECT_EQ(spans[0].upgrade_calls_ok, 1);
  EXPECT_EQ(spans[0].version_changes, std::vector<std::string>{"v1.11.6 -> v1.12.0"});
  EXPECT_EQ(CountCalls(journal, "revert", "MachineService/Upgrade", "", since), 1);
  EXPECT_EQ(CountCalls(journal, "revert", "MachineService/Rollback", "", since), 0);
  auto still = world().repo().Status("revert");
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(still->phase, ClusterPhase::kBlocked) << Summary(*still);
}
#endif  // TR_ASAN

TEST_F(E2eTest, UnhealthyEtcdBlocksTheRolloutBeforeAnyUpgradeCall) {
  ClusterDef cluster = MakeCluster("quorum", 3, 1, "1.11.6");
  cluster.nodes[2].faults = "[{kind: etcd_unhealthy}]";
  E2E_ASSERT_OK(world().StartFleet({cluster}));
  ASSERT_NO_FATAL_FAILURE(StartWith(world(), {{"quorum", AtTalos("1.11.6")}}));

  const std::string commit =
      world().PushProfiles({{"quorum", AtTalos("1.12.0")}}, "quorum: Talos 1.12.0");
  core::ClusterStatus blocked;
  E2E_ASSERT_OK_AND_ASSIGN(blocked,
                           WaitForPhase(world(), "quorum", ClusterPhase::kBlocked, commit));
  EXPECT_EQ(blocked.talos.state, core::ComponentState::kBlocked);
  EXPECT_TRUE(Names(blocked.message, "etcd")) << blocked.message;
  EXPECT_TRUE(WaitForMoreCalls(world(), "quorum", LastSeq(world().Journal()), 10));
  const auto& journal = world().Journal();
  EXPECT_EQ(CountCalls(journal, "quorum", "MachineService/Upgrade"), 0);
  EXPECT_EQ(CountCalls(journal, "quorum", "LifecycleService/Upgrade"), 0);
  EXPECT_TRUE(TouchedNodes(journal, "quorum").empty()) << Describe(UpgradeSpans(journal, "quorum"));
}

TEST_F(E2eTest, BrokenProfileBesideAGoodOneIsReportedWithFileAndLine) {
  E2E_ASSERT_OK(world().StartFleet(
      {MakeCluster("good", 1, 1, "1.11.6"), MakeCluster("broken", 1, 0, "1.11.6")}));
  ASSERT_NO_FATAL_FAILURE(
      StartWith(world(), {{"good", AtTalos("1.11.6")}, {"broken", AtTalos("1.11.6")}}));
  const uint64_t since = LastSeq(world().Journal());

  // The broken profile asks for 1.12.0 too, with a settle time in a unit that does not exist.
  const std::string broken =
      ProfileYaml(world().sim().cluster("broken"), AtTalos("1.12.0", {"settle: 5x"}));
  const auto settle = broken.find("settle: 5x");
  const int line = 1 + static_cast<int>(std::count(broken.begin(), broken.begin() + settle, '\n'));
  const std::string commit =
      world().PushProfiles({{"good", AtTalos("1.12.0")}}, "good: Talos 1.12.0; broken: a typo",
                           {{ProfilePath("broken"), broken}});

  E2E_ASSERT_OK(world().WaitForReady("good", "1.12.0", commit, kFailureTimeout).status());
  const std::string where = fmt::format("clusters/broken.yaml:{}:", line);
  EXPECT_TRUE(world().WaitUntil(
      kFailureTimeout,
      [&] { return world().repo().StatusText("broken").find(where) != std::string::npos; }))
      << "status/broken.yaml does not name " << where << ":\n"
      << world().repo().StatusText("broken");
  EXPECT_TRUE(TouchedNodes(world().Journal(), "broken", since).empty());
  EXPECT_EQ(UpgradeSpans(world().Journal(), "good", since).size(), 2u);
}

}  // namespace
}  // namespace tr::e2e
