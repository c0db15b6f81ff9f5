// NodeWatches::Looked: which looks at a cluster have its nodes watched. Watches are started by
// looks less than half the idle time apart and kept while looks come less than the idle time
// apart, so a cluster at a resync near the idle time never starts watches that the idle sweep
// cancels before its next look.
#include "reconciler/operations/node_watches.h"

#include <gtest/gtest.h>

#include "tests/support/simulated_env.h"

namespace tr::reconciler {
namespace {

using namespace std::chrono_literals;

class NodeWatchesLookTest : public ::testing::Test {
 protected:
  // Not the epoch: a look at the epoch would read as no look before.
  test_support::SimulatedEnv env_{Env::TimePoint{} + 1000h};
  NodeWatches watches_{env_, nullptr, 60s};
};

TEST_F(NodeWatchesLookTest, LooksCloseTogetherAreWatchedFromTheSecond) {
  EXPECT_FALSE(watches_.Looked("prod"));
  env_.Advance(1s);
  EXPECT_TRUE(watches_.Looked("prod"));
  env_.Advance(200ms);
  EXPECT_TRUE(watches_.Looked("prod"));
  EXPECT_FALSE(watches_.Looked("staging")) << "each cluster counts its own looks";
}

// The daemon's resync spreads ±10%: a 1-minute resync looks 54–66 s apart.
TEST_F(NodeWatchesLookTest, AResyncNearTheIdleTimeIsNeverWatched) {
  for (int look = 0; look < 10; ++look) {
    EXPECT_FALSE(watches_.Looked("prod")) << "look " << look;
    env_.Advance(look % 2 == 0 ? 54s : 59s);
  }
}

TEST_F(NodeWatchesLookTest, AWatchedClusterStaysWatchedUntilTheIdleTimePassesWithoutALook) {
  watches_.Looked("prod");
  env_.Advance(5s);
  ASSERT_TRUE(watches_.Looked("prod"));
  env_.Advance(45s);  // more than half the idle time: would not start watches, keeps them
  EXPECT_TRUE(watches_.Looked("prod"));
  env_.Advance(59s);
  EXPECT_TRUE(watches_.Looked("prod"));
  env_.Advance(60s);
  EXPECT_FALSE(watches_.Looked("prod")) << "a look the idle time after the last one";
  env_.Advance(45s);
  EXPECT_FALSE(watches_.Looked("prod")) << "not watched, so the half idle time applies again";
  env_.Advance(29s);
  EXPECT_TRUE(watches_.Looked("prod"));
}

}  // namespace
}  // namespace tr::reconciler
