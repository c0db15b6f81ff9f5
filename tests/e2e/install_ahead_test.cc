// policy.install: ahead against talos-sim: with the maintenance window days away, every node of
// a Talos 1.13+ step is installed and none rebooted; a power cut of one pending node boots its
// install, reported as activated early with no other node rebooted; a release the Image
// Factory then marks broken un-stages the others, so a later power cut boots their old version.
#include <time.h>

#include <string>

#include "base/env.h"
#include "fmt/format.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/support/process.h"

namespace tr::e2e {
namespace {

using core::ClusterStatus;
constexpr auto kAheadTimeout = 120s;

// A 30-minute UTC window three days from now: it never opens while the test runs.
std::string FarWindow() {
  const time_t t = std::chrono::system_clock::to_time_t(Env::Default().Now() + 72h);
  tm utc{};
  gmtime_r(&t, &utc);
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  return fmt::format("windows: [{{days: [{}], start: \"12:00\", duration: 30m, timezone: UTC}}]",
                     kDays[utc.tm_wday]);
}

const core::NodeStatus* NodeOf(const ClusterStatus& s, const std::string& name) {
  for (const core::NodeStatus& n : s.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

bool Pending(const ClusterStatus& s, const std::string& node) {
  for (const core::StagedInstall& staged : s.rollout.staged) {
    if (staged.node == node) return true;
  }
  return false;
}

TEST_F(E2eTest, InstallAheadRebootsNothingOutsideTheWindowAndReportsAPowerCutAsActivatedEarly) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("edge", 1, 2, "1.13.2", "1.35.0")}));
  const std::string factory = world().sim().factory_url();
  E2E_ASSERT_OK(world().sim().AddFactoryRelease("v1.14.0"));
  const std::vector<std::string> policy = {FarWindow(), "install: ahead"};
  world().PushProfiles({{"edge", AtTalos("1.13.2", policy, "1.35.0")}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon([&](DaemonOptions& o) {
    o.extra_args = {"--image-factory", factory, "--image-factory-ttl", "1s"};
  }));
  ClusterStatus before;
  E2E_ASSERT_OK_AND_ASSIGN(before, world().WaitForReady("edge", "1.13.2", "", kAheadTimeout));
  const uint64_t since = LastSeq(world().Journal());

  world().PushProfiles({{"edge", AtTalos("1.14.0", policy, "1.35.0")}}, "edge: Talos 1.14.0");
  ClusterStatus pending;
  E2E_ASSERT_OK_AND_ASSIGN(
      pending, world().WaitForStatus(
                   "edge",
                   [](const ClusterStatus& s) {
                     return s.phase == core::ClusterPhase::kWaitingForWindow &&
                            s.rollout.staged.size() == 3;
                   },
                   kAheadTimeout));
  EXPECT_NE(pending.message.find("3 nodes installed, pending reboot"), std::string::npos)
      << pending.message;
  auto journal = world().Journal();
  EXPECT_EQ(CountCalls(journal, "edge", "LifecycleService/Upgrade", "OK", since), 3);
  EXPECT_EQ(CountCalls(journal, "edge", "MachineService/Reboot", "", since), 0);
  for (const core::NodeStatus& n : pending.nodes) {
    EXPECT_EQ(n.talos, "1.13.2") << n.name;
    EXPECT_EQ(n.boot_id, NodeOf(before, n.name)->boot_id) << n.name << " rebooted";
  }

  // A power cut of one pending worker: it boots its install, and is done.
  E2E_ASSERT_OK(world().sim().InjectFault("edge-w-0", R"({"kind": "power_cycle", "count": 1})"));
  ClusterStatus early;
  E2E_ASSERT_OK_AND_ASSIGN(
      early, world().WaitForStatus(
                 "edge",
                 [](const ClusterStatus& s) {
                   const core::NodeStatus* w0 = NodeOf(s, "edge-w-0");
                   return !Pending(s, "edge-w-0") && w0 != nullptr &&
                          w0->last_operation.find("activated early") != std::string::npos;
                 },
                 kAheadTimeout));
  EXPECT_EQ(NodeOf(early, "edge-w-0")->talos, "1.14.0");
  EXPECT_EQ(early.rollout.staged.size(), 2u);
  EXPECT_NE(early.phase, core::ClusterPhase::kUpgradeFailed);
  journal = world().Journal();
  EXPECT_EQ(CountCalls(journal, "edge", "MachineService/Reboot", "", since), 0);
  for (const char* other : {"edge-cp-0", "edge-w-1"}) {
    EXPECT_EQ(NodeOf(early, other)->boot_id, NodeOf(before, other)->boot_id) << other;
  }

  // The release is withdrawn before the window: the others are un-staged, and a power cut then
  // boots the version they ran.
  E2E_ASSERT_OK(world().sim().MarkFactoryReleaseBroken("v1.14.0"));
  ClusterStatus blocked;
  E2E_ASSERT_OK_AND_ASSIGN(
      blocked, world().WaitForStatus(
                   "edge",
                   [](const ClusterStatus& s) {
                     return s.phase == core::ClusterPhase::kBlocked && s.rollout.staged.empty();
                   },
                   kAheadTimeout));
  EXPECT_NE(blocked.message.find("1.14.0"), std::string::npos) << blocked.message;
  E2E_ASSERT_OK(world().sim().InjectFault("edge-w-1", R"({"kind": "power_cycle", "count": 1})"));
  ClusterStatus after;
  E2E_ASSERT_OK_AND_ASSIGN(
      after, world().WaitForStatus(
                 "edge",
                 [&](const ClusterStatus& s) {
                   const core::NodeStatus* w1 = NodeOf(s, "edge-w-1");
                   return w1 != nullptr && !w1->boot_id.empty() &&
                          w1->boot_id != NodeOf(before, "edge-w-1")->boot_id && w1->ready;
                 },
                 kAheadTimeout));
  EXPECT_EQ(NodeOf(after, "edge-w-1")->talos, "1.13.2") << "a node booted the broken release";
  EXPECT_EQ(NodeOf(after, "edge-cp-0")->talos, "1.13.2");
  EXPECT_EQ(CountCalls(world().Journal(), "edge", "MachineService/Reboot", "", since), 0);
}

bool InHistory(const ClusterStatus& s, const std::string& text) {
  for (const core::HistoryEntry& h : s.history) {
    if (h.event.find(text) != std::string::npos) return true;
  }
  return false;
}

// The daemon killed (-9) once every node is installed, and started again from a status branch
// put back to before the installs, with no state of its own: the pending installs are read back
// from the Kubernetes nodes' marks, none is installed again and nothing reboots.
TEST_F(E2eTest, PendingInstallsLostFromTheStatusAreReadBackFromTheNodes) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("edge", 1, 2, "1.13.2", "1.35.0")}));
  const std::vector<std::string> policy = {FarWindow(), "install: ahead"};
  world().PushProfiles({{"edge", AtTalos("1.13.2", policy, "1.35.0")}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(world().WaitForReady("edge", "1.13.2", "", kAheadTimeout).status());
  const std::string before_installs = world().repo().StatusTip();
  const uint64_t since = LastSeq(world().Journal());

  world().PushProfiles({{"edge", AtTalos("1.13.9", policy, "1.35.0")}}, "edge: Talos 1.13.9");
  E2E_ASSERT_OK(world()
                    .WaitForStatus(
                        "edge",
                        [](const ClusterStatus& s) {
                          return s.phase == core::ClusterPhase::kWaitingForWindow &&
                                 s.rollout.staged.size() == 3;
                        },
                        kAheadTimeout)
                    .status());
  world().daemon().Kill();
  gitsource::testing::MustRun({"git", "--git-dir", world().repo().bare().string(), "update-ref",
                               std::string("refs/heads/") + kStatusBranch, before_installs});
  std::filesystem::remove_all(world().dir() / "daemon-state");
  E2E_ASSERT_OK(world().daemon().Start());

  ClusterStatus recalled;
  E2E_ASSERT_OK_AND_ASSIGN(
      recalled, world().WaitForStatus(
                    "edge",
                    [](const ClusterStatus& s) {
                      return s.phase == core::ClusterPhase::kWaitingForWindow &&
                             s.rollout.staged.size() == 3;
                    },
                    kAheadTimeout));
  EXPECT_TRUE(InHistory(recalled, "found edge-w-0's pending install of Talos 1.13.9"))
      << recalled.message;
  const auto journal = world().Journal();
  EXPECT_EQ(CountCalls(journal, "edge", "LifecycleService/Upgrade", "", since), 3)
      << "a node was installed again";
  EXPECT_EQ(CountCalls(journal, "edge", "MachineService/Reboot", "", since), 0);
}

}  // namespace
}  // namespace tr::e2e
