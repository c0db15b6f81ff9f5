// Drains a PodDisruptionBudget never lets finish (Talos 1.13+, the lifecycle path where the
// reconciler drains): policy.drain.onTimeout halt stops before the node reboots, naming it, its
// pods and the budget, and deletes nothing; force deletes the pods the budget holds past the
// timeout and the rollout goes on. Plain pass only, for the time budget: the drain policy itself
// is tested in both passes (tests/reconciler/kube_test.cc, tests/core).
#include <algorithm>

#include "fmt/format.h"
#include "tests/e2e/e2e_fixture.h"

namespace tr::e2e {
namespace {
#ifndef TR_ASAN

using core::ClusterPhase;

constexpr auto kTimeout = 90s;

// Two workers, one guarded pod on each, and a budget that wants both up: no eviction is ever
// allowed, whichever worker goes first, nor for a pod a forced drain moved.
ClusterDef GuardedCluster(const std::string& name) {
  ClusterDef cluster = MakeCluster(name, 1, 2, "1.13.2", "1.35.0");
  cluster.extra = fmt::format(
      "    pods:\n"
      "      - {{name: web-1, namespace: default, node: {0}-w-0, labels: {{app: web}}}}\n"
      "      - {{name: web-2, namespace: default, node: {0}-w-1, labels: {{app: web}}}}\n"
      "    pdbs:\n"
      "      - {{name: web, namespace: default, selector: {{app: web}}, min_available: 2}}\n",
      name);
  return cluster;
}

// The daemon's own --drain-timeout is 30s: a halt or a force within seconds is the profile's.
ProfileDef Drain(const std::string& talos, const std::string& on_timeout) {
  return AtTalos(talos, {"drain: {timeout: 2s, onTimeout: " + on_timeout + "}"}, "1.35.0");
}

void StartAt(E2eWorld& world, const std::string& cluster, const ProfileDef& profile) {
  world.PushProfiles({{cluster, profile}}, "initial profiles");
  E2E_ASSERT_OK(world.StartDaemon());
  E2E_ASSERT_OK(world.WaitForReady(cluster, profile.talos, "", kTimeout).status());
}

// Journal state entries of `cluster` after `since` whose `what` is `what` ("evict", "delete").
std::vector<std::string> PodEvents(const std::vector<JournalLine>& journal,
                                   const std::string& cluster, const std::string& what,
                                   uint64_t since) {
  std::vector<std::string> pods;
  for (const auto& line : journal) {
    if (line.seq > since && !line.call && line.cluster == cluster && line.what == what) {
      pods.push_back(line.detail);
    }
  }
  return pods;
}

// Eviction calls of `cluster` after `since` that a budget refused (429).
int RefusedEvictions(const std::vector<JournalLine>& journal, const std::string& cluster,
                     uint64_t since) {
  return static_cast<int>(std::count_if(journal.begin(), journal.end(), [&](const auto& line) {
    return line.seq > since && line.call && line.cluster == cluster && line.code == "429" &&
           line.what.ends_with("/eviction");
  }));
}

TEST_F(E2eTest, DrainHeldByABudgetHaltsBeforeTheRebootNamingNodePodsAndBudget) {
  E2E_ASSERT_OK(world().StartFleet({GuardedCluster("hold")}));
  ASSERT_NO_FATAL_FAILURE(StartAt(world(), "hold", Drain("1.13.2", "halt")));
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit =
      world().PushProfiles({{"hold", Drain("1.13.9", "halt")}}, "hold: Talos 1.13.9");
  core::ClusterStatus failed;
  E2E_ASSERT_OK_AND_ASSIGN(failed, world().WaitForStatus(
                                       "hold",
                                       [&](const core::ClusterStatus& s) {
                                         return s.phase == ClusterPhase::kUpgradeFailed &&
                                                s.desired_commit_attempted == commit;
                                       },
                                       kTimeout));
  ASSERT_TRUE(failed.rollout.failure.has_value()) << Summary(failed);
  const std::string node = failed.rollout.failure->node;
  const std::string& why = failed.rollout.failure->message;
  EXPECT_TRUE(node == "hold-w-0" || node == "hold-w-1") << node;
  EXPECT_NE(why.find("drain of " + node + " timed out after 2s"), std::string::npos) << why;
  EXPECT_NE(why.find(node == "hold-w-0" ? "default/web-1" : "default/web-2"), std::string::npos)
      << why;
  EXPECT_NE(why.find("disruption budget web"), std::string::npos) << why;
  EXPECT_NE(failed.message.find(node), std::string::npos) << failed.message;

  // The daemon goes on looking, and touches nothing more: the held node was installed and
  // cordoned but never rebooted, no other node was started, no pod was deleted.
  const uint64_t halted = LastSeq(world().Journal());
  EXPECT_TRUE(world().WaitUntil(60s, [&] {
    const auto& journal = world().Journal();
    return std::count_if(journal.begin(), journal.end(), [&](const JournalLine& line) {
             return line.seq > halted && line.call && line.cluster == "hold";
           }) >= 10;
  }));
  const auto& journal = world().Journal();
  const auto spans = UpgradeSpans(journal, "hold", since);
  ASSERT_EQ(spans.size(), 1u) << Describe(spans);
  EXPECT_EQ(spans[0].node, node);
  EXPECT_EQ(spans[0].reboot_calls_ok, 0);
  EXPECT_TRUE(spans[0].version_changes.empty()) << Describe(spans);
  EXPECT_EQ(CountCalls(journal, "hold", "MachineService/Reboot", "", since), 0);
  EXPECT_GE(RefusedEvictions(journal, "hold", since), 2);
  EXPECT_TRUE(PodEvents(journal, "hold", "delete", since).empty());
  EXPECT_TRUE(PodEvents(journal, "hold", "evict", since).empty());
  auto still = world().repo().Status("hold");
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(still->phase, ClusterPhase::kUpgradeFailed) << Summary(*still);
}

TEST_F(E2eTest, DrainHeldByABudgetWithForceDeletesThePodsAndCompletes) {
  E2E_ASSERT_OK(world().StartFleet({GuardedCluster("force")}));
  ASSERT_NO_FATAL_FAILURE(StartAt(world(), "force", Drain("1.13.2", "force")));
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit =
      world().PushProfiles({{"force", Drain("1.13.9", "force")}}, "force: Talos 1.13.9");
  E2E_ASSERT_OK(world().WaitForReady("force", "1.13.9", commit, kTimeout).status());

  const auto& journal = world().Journal();
  const auto spans = UpgradeSpans(journal, "force", since);
  SCOPED_TRACE(Describe(spans));
  ASSERT_EQ(spans.size(), 3u);
  for (const auto& span : spans) {
    SCOPED_TRACE(span.node);
    EXPECT_EQ(span.upgrade_calls_ok, 1);
    EXPECT_EQ(span.reboot_calls_ok, 1);
    EXPECT_EQ(span.version_changes, std::vector<std::string>{"v1.13.2 -> v1.13.9"});
  }
  // Both guarded pods were deleted once their evictions had been refused for the timeout
  // (an eviction refused at the start and one 2 s later, at least, per forced drain).
  const std::vector<std::string> deleted = PodEvents(journal, "force", "delete", since);
  EXPECT_NE(std::find(deleted.begin(), deleted.end(), "default/web-1"), deleted.end());
  EXPECT_NE(std::find(deleted.begin(), deleted.end(), "default/web-2"), deleted.end());
  EXPECT_GE(RefusedEvictions(journal, "force", since), 4);
}

#endif  // TR_ASAN
}  // namespace
}  // namespace tr::e2e
