// The shard mapping: the documented hash, a stable and even spread, lease names, fair shares.
#include "core/shards.h"

#include <gtest/gtest.h>

#include <vector>

#include "fmt/format.h"

namespace tr::core {
namespace {

TEST(ShardsTest, Fnv1aMatchesThePublishedVectors) {
  // The FNV-1a 32-bit test vectors of the reference implementation.
  EXPECT_EQ(Fnv1a32(""), 0x811c9dc5u);
  EXPECT_EQ(Fnv1a32("a"), 0xe40c292cu);
  EXPECT_EQ(Fnv1a32("foobar"), 0xbf9cf968u);
}

TEST(ShardsTest, ClustersSpreadOverEveryShardAndStayPut) {
  std::vector<int> counts(4, 0);
  for (int i = 0; i < 400; ++i) {
    const std::string name = fmt::format("prod-{}", i);
    const int shard = ShardOf(name, 4);
    ASSERT_GE(shard, 0);
    ASSERT_LT(shard, 4);
    EXPECT_EQ(ShardOf(name, 4), shard);
    ++counts[static_cast<size_t>(shard)];
  }
  for (int count : counts) {
    EXPECT_GT(count, 60);  // 100 each on average
    EXPECT_LT(count, 140);
  }
  EXPECT_EQ(ShardOf("anything", 1), 0);
  EXPECT_EQ(ShardOf("foobar", 7), static_cast<int>(0xbf9cf968u % 7));
}

TEST(ShardsTest, LeaseNamesAndFairShares) {
  EXPECT_EQ(ShardLeaseName("talos-reconciler", 0, 1), "talos-reconciler");
  EXPECT_EQ(ShardLeaseName("talos-reconciler", 3, 4), "talos-reconciler-shard-3");
  EXPECT_EQ(FairShare(4, 3), 2);
  EXPECT_EQ(FairShare(4, 2), 2);
  EXPECT_EQ(FairShare(4, 1), 4);
  EXPECT_EQ(FairShare(1, 2), 1);
  EXPECT_EQ(FairShare(5, 0), 5);
}

}  // namespace
}  // namespace tr::core
