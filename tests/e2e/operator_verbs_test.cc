// The operator's verbs end to end: `pause`, `resume` and `retry` are one command each, in a
// checkout of the profile repository, and each leaves a commit saying who (the person's Git
// identity) and why (--reason); the daemon holds a new version while paused and rolls it out
// once resumed, and a rollout halted by a failure goes on after a retry.
#include <gmock/gmock.h>

#include <fstream>
#include <sstream>

#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/operator_checkout.h"

namespace tr::e2e {
namespace {

using core::ClusterPhase;
namespace fs = std::filesystem;

std::string VerbsProfileText(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(E2eTest, PauseAndResumeAreOneCommandEachAndLeaveACommitSayingWhoAndWhy) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("hold", 1, 1, "1.11.6")}));
  world().PushProfiles({{"hold", AtTalos("1.11.6", {"settle: 1s"})}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(world()
                    .WaitForStatus(
                        "hold", [](const core::ClusterStatus& s) { return s.phase == ClusterPhase::kReady; },
                        60s)
                    .status());
  const OperatorCheckout work(world());
  const std::string who = work.Who();
  ASSERT_FALSE(who.empty());

  work.Verb("pause", "hold", "change freeze for the release");
  // While paused, a new version waits: nothing is touched.
  const std::string profile = ProfilePath("hold");
  std::string text = VerbsProfileText(work.dir() / profile);
  ASSERT_NE(text.find("1.11.6"), std::string::npos) << text;
  text.replace(text.find("1.11.6"), 6, "1.12.0");
  std::ofstream(work.dir() / profile) << text;
  work.Git({"commit", "--quiet", "-am", "hold: Talos 1.12.0"});
  work.Git({"push", "--quiet"});
  const std::string bump = work.Head();
  const uint64_t since = LastSeq(world().Journal());
  E2E_ASSERT_OK(world()
                    .WaitForStatus(
                        "hold",
                        [&](const core::ClusterStatus& s) {
                          return s.desired_commit_attempted == bump &&
                                 s.phase == ClusterPhase::kPaused;
                        },
                        60s)
                    .status());
  EXPECT_TRUE(TouchedNodes(world().Journal(), "hold", since).empty());

  work.Verb("resume", "hold", "release shipped");
  E2E_ASSERT_OK(world().WaitForReady("hold", "1.12.0", work.Head(), 120s).status());

  // The trace in Git: who and why, one commit per verb.
  const std::string log = work.Git({"log", "--format=%an <%ae>: %s", "-4"});
  EXPECT_THAT(log, ::testing::HasSubstr(who + ": resume hold: release shipped"));
  EXPECT_THAT(log, ::testing::HasSubstr(who + ": pause hold: change freeze for the release"));
}

// A worker whose first boot into the new version fails (a boot_failure that fires once) halts
// the rollout: UpgradeFailed, and the daemon leaves it there. One `retry` later the rollout
// goes on from that node and finishes, and the commit says who asked and why.
TEST_F(E2eTest, RetryAfterUpgradeFailedIsOneCommandAndFinishesTheRollout) {
  ClusterDef cluster = MakeCluster("again", 1, 1, "1.11.6");
  for (auto& node : cluster.nodes) {
    if (!node.control_plane) node.faults = "[{kind: boot_failure, count: 1}]";
  }
  E2E_ASSERT_OK(world().StartFleet({cluster}));
  world().PushProfiles({{"again", AtTalos("1.11.6", {"settle: 1s"})}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon());
  const std::string bump =
      world().PushProfiles({{"again", AtTalos("1.12.0", {"settle: 1s"})}}, "again: Talos 1.12.0");
  core::ClusterStatus failed;
  E2E_ASSERT_OK_AND_ASSIGN(failed, world().WaitForStatus(
                                       "again",
                                       [&](const core::ClusterStatus& s) {
                                         return s.desired_commit_attempted == bump &&
                                                s.phase == ClusterPhase::kUpgradeFailed;
                                       },
                                       120s));
  ASSERT_TRUE(failed.rollout.failure.has_value());
  EXPECT_EQ(failed.rollout.failure->retry, "");

  const OperatorCheckout work(world());
  work.Verb("retry", "again", "the node's disk was replaced");
  const std::string retried = work.Head();
  ASSERT_NE(retried, bump);
  EXPECT_THAT(VerbsProfileText(work.dir() / ProfilePath("again")),
              ::testing::HasSubstr("talos-reconciler.dev/retry: \""));
  core::ClusterStatus ready;
  E2E_ASSERT_OK_AND_ASSIGN(ready, world().WaitForReady("again", "1.12.0", retried, 120s));
  EXPECT_FALSE(ready.rollout.failure.has_value());
  // The failed node was asked once more, and no node twice after the retry.
  const std::string node = failed.rollout.failure->node;
  EXPECT_EQ(CountCalls(world().Journal(), "again", "MachineService/Upgrade", "", 0) +
                CountCalls(world().Journal(), "again", "LifecycleService/Upgrade", "", 0),
            3)
      << Describe(UpgradeSpans(world().Journal(), "again", 0));
  const std::string log = work.Git({"log", "--format=%an <%ae>: %s", "-1"});
  EXPECT_THAT(log, ::testing::HasSubstr(work.Who() + ": retry again: the node's disk was replaced"));
}

}  // namespace
}  // namespace tr::e2e
