// Behaviours of real Talos that the simulator reproduces and the reconciler must live with,
// end to end.
#include "tests/e2e/e2e_fixture.h"

namespace tr::e2e {
namespace {

constexpr auto kTimeout = 120s;

// On Talos 1.12.0-1.12.8 a control plane's Upgrade takes the etcd upgrade mutex even with
// preserve (v1alpha1_server.go). Held by another session, the node refuses; the mutex's lease
// expires, so the reconciler retries instead of failing the rollout.
TEST_F(E2eTest, UpgradeMutexHeldOn112IsRetriedNotFatal) {
  ClusterDef cluster = MakeCluster("mutex", 3, 0, "1.12.5");
  for (auto& node : cluster.nodes) node.faults = "[{kind: upgrade_lock_held, count: 1}]";
  E2E_ASSERT_OK(world().StartFleet({cluster}));
  world().PushProfiles({{"mutex", AtTalos("1.12.5")}}, "initial profiles");
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(world().WaitForReady("mutex", "1.12.5", "", kTimeout).status());
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit =
      world().PushProfiles({{"mutex", AtTalos("1.13.9")}}, "mutex: Talos 1.13.9");
  E2E_ASSERT_OK(world().WaitForReady("mutex", "1.13.9", commit, kTimeout).status());
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

}  // namespace
}  // namespace tr::e2e
