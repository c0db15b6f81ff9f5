// Behaviours of real Talos that the simulator reproduces and the reconciler must live with,
// end to end: the etcd upgrade mutex on 1.12, a reboot between pre-pull and install, calls that
// hang after a reboot, an installer image the registry does not have.
#include "tests/e2e/e2e_fixture.h"

namespace tr::e2e {
namespace {

constexpr auto kFidelityTimeout = 120s;

// Starts the fleet with `cluster`, the daemon on a profile at `talos`, waits until the cluster
// is Ready there; `since` gets the journal's last sequence number.
void StartReadyAt(E2eWorld& world, const ClusterDef& cluster, const std::string& talos,
                  uint64_t* since, const FleetOptions& options = {}) {
  E2E_ASSERT_OK(world.StartFleet({cluster}, options));
  world.PushProfiles({{cluster.name, AtTalos(talos)}}, "initial profiles");
  E2E_ASSERT_OK(world.StartDaemon());
  E2E_ASSERT_OK(world.WaitForReady(cluster.name, talos, "", kFidelityTimeout).status());
  *since = LastSeq(world.Journal());
}

// On Talos 1.12.0-1.12.8 a control plane's Upgrade takes the etcd upgrade mutex even with
// preserve (v1alpha1_server.go). Held by another session, the node refuses; the mutex's lease
// expires, so the reconciler retries instead of failing the rollout.
TEST_F(E2eTest, UpgradeMutexHeldOn112IsRetriedNotFatal) {
  ClusterDef cluster = MakeCluster("mutex", 3, 0, "1.12.5");
  for (auto& node : cluster.nodes) node.faults = "[{kind: upgrade_lock_held, count: 1}]";
  uint64_t since = 0;
  ASSERT_NO_FATAL_FAILURE(StartReadyAt(world(), cluster, "1.12.5", &since));

  const std::string commit =
      world().PushProfiles({{"mutex", AtTalos("1.13.9")}}, "mutex: Talos 1.13.9");
  E2E_ASSERT_OK(world().WaitForReady("mutex", "1.13.9", commit, kFidelityTimeout).status());
  const auto& journal = world().Journal();
  EXPECT_EQ(CountCalls(journal, "mutex", "MachineService/Upgrade", "UNKNOWN", since), 3);
  EXPECT_EQ(CountCalls(journal, "mutex", "MachineService/Upgrade", "OK", since), 3);
  const auto spans = UpgradeSpans(journal, "mutex", since);
  SCOPED_TRACE(Describe(spans));
  ASSERT_EQ(spans.size(), 3u);
  for (const auto& span : spans) {
    EXPECT_EQ(span.version_changes, std::vector<std::string>{"v1.12.5 -> v1.13.9"}) << span.node;
  }
  EXPECT_EQ(OverlapProblem(spans), "");
}

// A worker loses power right after it answers the pre-pull, and comes back with its EPHEMERAL
// wiped: the image is gone from the CRI store the install reads. The executor pulls again
// right before the install, so the install never fails (Talos would answer Internal "not
// found in containerd store" and the rollout would halt) and each node is upgraded once.
TEST_F(E2eTest, ANodeRebootedBetweenPrePullAndInstallIsPulledAgainAndUpgradedOnce) {
  ClusterDef cluster = MakeCluster("blip", 1, 2, "1.13.2");
  cluster.nodes[1].faults =
      "[{kind: reboot_after_pull, count: 1, image: metal-installer}, "
      "{kind: ephemeral_wiped, count: 1}]";
  const std::string blipped = cluster.nodes[1].name;
  uint64_t since = 0;
  ASSERT_NO_FATAL_FAILURE(StartReadyAt(world(), cluster, "1.13.2", &since));

  const std::string commit = world().PushProfiles({{"blip", AtTalos("1.13.9")}}, "blip: 1.13.9");
  E2E_ASSERT_OK(world().WaitForReady("blip", "1.13.9", commit, kFidelityTimeout).status());
  const auto& journal = world().Journal();
  // The blip happened after the pre-pull and before that node's install.
  uint64_t fired = 0, wiped = 0, installed = 0;
  for (const auto& line : journal) {
    if (line.seq <= since || line.node != blipped) continue;
    if (!line.call && line.what == "fault" && line.detail.starts_with("reboot_after_pull fired")) {
      fired = line.seq;
    }
    if (!line.call && line.what == "fault" && line.detail == "ephemeral_wiped fired") {
      wiped = line.seq;
    }
    if (line.call && line.code == "OK" && line.what.ends_with("LifecycleService/Upgrade")) {
      installed = line.seq;
    }
  }
  ASSERT_NE(fired, 0u);
  EXPECT_LT(fired, wiped);
  EXPECT_LT(wiped, installed);
  EXPECT_EQ(CountCalls(journal, "blip", "LifecycleService/Upgrade", "OK", since), 3);
  EXPECT_EQ(CountCalls(journal, "blip", "LifecycleService/Upgrade", "INTERNAL", since), 0);
  const auto spans = UpgradeSpans(journal, "blip", since);
  SCOPED_TRACE(Describe(spans));
  ASSERT_EQ(spans.size(), 3u);
  for (const auto& span : spans) {
    EXPECT_EQ(span.version_changes, std::vector<std::string>{"v1.13.2 -> v1.13.9"}) << span.node;
    EXPECT_EQ(span.upgrade_calls_ok, 1) << span.node;
  }
}

// After each reboot, calls the control plane's apid forwards to the worker hang for 3 s (real)
// and then fail Unavailable "i/o timeout": the rollout waits them out and completes.
TEST_F(E2eTest, CallsHangingAfterAWorkerRebootsDelayTheRolloutButDoNotFailIt) {
  FleetOptions options;
  options.timings = "{apid_hang: 300s}";
  uint64_t since = 0;
  ASSERT_NO_FATAL_FAILURE(
      StartReadyAt(world(), MakeCluster("hang", 1, 1, "1.13.2"), "1.13.2", &since, options));

  const std::string commit = world().PushProfiles({{"hang", AtTalos("1.13.9")}}, "hang: 1.13.9");
  E2E_ASSERT_OK(world().WaitForReady("hang", "1.13.9", commit, kFidelityTimeout).status());
  const auto& journal = world().Journal();
  int timed_out = 0;
  for (const auto& line : journal) {
    timed_out += line.seq > since && line.call && line.code == "UNAVAILABLE" &&
                 line.detail.ends_with(":50000: i/o timeout\"");
  }
  EXPECT_GT(timed_out, 0);
  EXPECT_EQ(CountCalls(journal, "hang", "LifecycleService/Upgrade", "OK", since), 2);
  const auto spans = UpgradeSpans(journal, "hang", since);
  SCOPED_TRACE(Describe(spans));
  ASSERT_EQ(spans.size(), 2u);
  for (const auto& span : spans) EXPECT_EQ(span.upgrade_calls_ok, 1) << span.node;
}

// The registry has no installer for a schematic nobody built (a typo in the profile): the
// pre-pull fails NotFound "error pulling image" and the rollout stops before any node is
// touched.
TEST_F(E2eTest, ATypoedSchematicStopsAtThePrePullBeforeAnyNodeIsTouched) {
  uint64_t since = 0;
  ASSERT_NO_FATAL_FAILURE(
      StartReadyAt(world(), MakeCluster("typo", 1, 1, "1.13.2"), "1.13.2", &since));

  ProfileDef typo = AtTalos("1.13.9");
  typo.image = "factory.talos.dev/metal-installer/" + std::string(64, 'f');
  const std::string commit =
      world().PushProfiles({{"typo", typo}}, "typo: 1.13.9, wrong schematic");
  core::ClusterStatus failed;
  E2E_ASSERT_OK_AND_ASSIGN(failed, world().WaitForStatus(
                                       "typo",
                                       [&](const core::ClusterStatus& s) {
                                         return s.phase == core::ClusterPhase::kUpgradeFailed &&
                                                s.desired_commit_attempted == commit;
                                       },
                                       kFidelityTimeout));
  const std::string said = failed.message + " | " + failed.talos.message;
  EXPECT_NE(said.find("error pulling image"), std::string::npos) << said;
  const auto& journal = world().Journal();
  EXPECT_GE(CountCalls(journal, "typo", "ImageService/Pull", "NOT_FOUND", since), 1);
  EXPECT_EQ(CountCalls(journal, "typo", "LifecycleService/Upgrade", "", since), 0);
  EXPECT_TRUE(TouchedNodes(journal, "typo", since).empty())
      << Describe(UpgradeSpans(journal, "typo", since));
}

}  // namespace
}  // namespace tr::e2e
