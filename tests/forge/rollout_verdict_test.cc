// JudgeRollout: a merged change judged from the clusters' recorded statuses.
#include "reconciler/features/pull_requests/rollout_verdict.h"

#include <gtest/gtest.h>

namespace tr::reconciler::pull_requests {
namespace {

using core::ClusterPhase;

core::ClusterStatus On(ClusterPhase phase, std::string attempted, std::string applied) {
  core::ClusterStatus s;
  s.phase = phase;
  s.desired_commit_attempted = std::move(attempted);
  s.desired_commit_applied = std::move(applied);
  return s;
}

// c0 (a direct push), c1 = #1 changing alpha and beta, c2 = #2 changing beta, c3 a direct push.
std::vector<MergedChange> History() {
  return {{"c0", 1, std::nullopt, std::nullopt},
          {"c1", 2, 1, std::set<std::string>{"alpha", "beta"}},
          {"c2", 3, 2, std::set<std::string>{"beta"}},
          {"c3", 4, std::nullopt, std::nullopt}};
}

TEST(RolloutVerdictTest, AClusterStillOnTheChangeDecidesByItsPhase) {
  const auto history = History();
  EXPECT_EQ(JudgeRollout(history, 1,
                         {{"alpha", On(ClusterPhase::kUpgradingTalos, "c1", "c0")},
                          {"beta", On(ClusterPhase::kReady, "c1", "c1")}})
                .outcome,
            Outcome::kPending);
  EXPECT_EQ(JudgeRollout(history, 1,
                         {{"alpha", On(ClusterPhase::kUpgradeFailed, "c1", "c0")},
                          {"beta", On(ClusterPhase::kUpgradingTalos, "c1", "c0")}})
                .outcome,
            Outcome::kFailed);
}

TEST(RolloutVerdictTest, ALaterChangeToAClusterSupersedesAndOneElsewhereDoesNot) {
  const auto history = History();
  // beta was still rolling #1 out when #2 (which changes beta) merged; alpha carried #1 on
  // under c2 and c3, which do not change it, and reached Ready there.
  const RolloutVerdict v = JudgeRollout(history, 1,
                                        {{"alpha", On(ClusterPhase::kReady, "c3", "c3")},
                                         {"beta", On(ClusterPhase::kUpgradingTalos, "c3", "c0")},
                                         {"gamma", On(ClusterPhase::kReady, "c3", "c3")}});
  EXPECT_EQ(v.outcome, Outcome::kSuperseded);
  ASSERT_TRUE(v.superseded_by.has_value());
  EXPECT_EQ(v.superseded_by->pull_request, 2);
  ASSERT_EQ(v.clusters.size(), 2u);  // gamma is not in #1's scope
  EXPECT_EQ(v.clusters[0].outcome, Outcome::kApplied);
  EXPECT_FALSE(v.clusters[0].on_change);
  EXPECT_EQ(v.clusters[1].outcome, Outcome::kSuperseded);
}

TEST(RolloutVerdictTest, AppliedThenMovedOnStaysApplied) {
  const auto history = History();
  const RolloutVerdict v =
      JudgeRollout(history, 2, {{"beta", On(ClusterPhase::kUpgradingTalos, "c3", "c2")}});
  EXPECT_EQ(v.outcome, Outcome::kApplied);
  // A cluster not on the change yet (its records are older) holds it pending.
  EXPECT_EQ(JudgeRollout(history, 2, {{"beta", On(ClusterPhase::kReady, "c1", "c1")}}).outcome,
            Outcome::kPending);
}

// Commits of one rank (learnt at a restart) are in no known order: a cluster on another one of
// that rank has not moved past the change.
TEST(RolloutVerdictTest, ACommitOfTheSameRankIsNotLater) {
  std::vector<MergedChange> history = History();
  history[0].rank = history[1].rank;  // c0 and c1: order unknown
  EXPECT_EQ(JudgeRollout(history, 1, {{"alpha", On(ClusterPhase::kReady, "c0", "c0")}}).outcome,
            Outcome::kPending);
}

}  // namespace
}  // namespace tr::reconciler::pull_requests
