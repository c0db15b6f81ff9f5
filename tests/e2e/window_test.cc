// A maintenance window that is closed when the change arrives: the daemon waits, then rolls out
// once the window opens (a window computed from the current UTC time, opening within about a
// minute, so the test's wall time stays bounded).
#include "base/env.h"
#include "tests/e2e/e2e_fixture.h"

namespace tr::e2e {
namespace {

using core::ClusterPhase;
using Clock = std::chrono::system_clock;

// Waiting for a whole minute to turn takes 40-70 s: registered in the plain pass only (TR_ASAN,
// defined by CMake for the sanitizer pass), as the test time budget asks; the
// window arithmetic has its unit tests in core, run in both passes.
#ifndef TR_ASAN
struct Window {
  Clock::time_point opens;
  std::string policy_line;  // "windows: [{days: [Tue], start: \"14:03\", ...}]"
};

// A 30-minute window in UTC that opens at the next whole minute at least `lead` from now.
Window NextWindow(std::chrono::seconds lead) {
  const auto opens = std::chrono::ceil<std::chrono::minutes>(Env::Default().Now() + lead);
  return {.opens = opens, .policy_line = WindowPolicyLine(opens)};
}

TEST_F(E2eTest, ClosedMaintenanceWindowWaitsThenProceeds) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("night", 1, 2, "1.11.6")}));
  const Window window = NextWindow(10s);
  const std::vector<std::string> policy = {window.policy_line, "settle: 1s"};
  world().PushProfiles({{"night", AtTalos("1.11.6", policy)}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(
      world()
          .WaitForStatus(
              "night", [](const core::ClusterStatus& s) { return !s.talos.current.empty(); }, 60s)
          .status());
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit =
      world().PushProfiles({{"night", AtTalos("1.12.0", policy)}}, "night: Talos 1.12.0");
  core::ClusterStatus waiting;
  E2E_ASSERT_OK_AND_ASSIGN(waiting, world().WaitForStatus(
                                        "night",
                                        [&](const core::ClusterStatus& s) {
                                          return s.desired_commit_attempted == commit &&
                                                 s.phase == ClusterPhase::kWaitingForWindow;
                                        },
                                        60s));
  ASSERT_LT(Env::Default().Now(), window.opens)
      << "the window opened before the daemon saw the change";
  EXPECT_TRUE(TouchedNodes(world().Journal(), "night", since).empty());
  EXPECT_EQ(waiting.talos.target, "1.12.0");

  const auto until_open =
      std::chrono::duration_cast<std::chrono::milliseconds>(window.opens - Env::Default().Now());
  E2E_ASSERT_OK(world().WaitForReady("night", "1.12.0", commit, until_open + 120s).status());
  const auto spans = UpgradeSpans(world().Journal(), "night", since);
  SCOPED_TRACE("journal spans:\n" + Describe(spans));
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_GE(spans.front().first_time, window.opens) << "a node was touched before the window";
  EXPECT_EQ(OverlapProblem(spans), "");
  // The settle time passes between one node being back and the next being touched.
  for (size_t i = 1; i < spans.size(); ++i) {
    EXPECT_GE(spans[i].first_time - spans[i - 1].last_time, 1s) << spans[i].node;
  }
}
#endif  // TR_ASAN

}  // namespace
}  // namespace tr::e2e
