// The shard mapping: the documented hash, a stable and even spread, lease names, fair shares.
#include "core/shards.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
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

TEST(ShardsTest, MembersAreLiveUntilTheirLeaseRunsOutPlusTheSkewMargin) {
  using std::chrono::seconds;
  const std::chrono::system_clock::time_point t0{seconds(1'000'000)};
  const std::vector<Member> members = {
      {"a", t0, seconds(15)},               // renewed just now
      {"b", t0 - seconds(19), seconds(15)},  // 15 s + 5 s margin not over yet
      {"c", t0 - seconds(20), seconds(15)},  // over: dead
      {"", t0, seconds(1)},                 // left (holder cleared)
  };
  const MemberLiveness liveness{std::chrono::milliseconds(5000), std::chrono::milliseconds(4000)};
  EXPECT_EQ(LiveMembers(members, "self", t0, liveness), (std::set<std::string>{"a", "b", "self"}));
  EXPECT_EQ(LiveMembers({}, "self", t0, {}), (std::set<std::string>{"self"}));
  EXPECT_EQ(MemberLeaseName("talos-reconciler", "pod-1"), "talos-reconciler-member-pod-1");
}

// A replica killed with its membership Lease just renewed: the Lease counts it for another
// duration + margin, longer than its shard Leases last. Once its renewTime has stood still for
// the stall time on the reader's clock it is no longer live, so nobody gives it a shard.
TEST(ShardsTest, AMemberThatStoppedRenewingIsNotLiveAndNotHandedAShard) {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  const std::chrono::system_clock::time_point t0{seconds(1'000'000)};
  const MemberLiveness liveness{milliseconds(5000), milliseconds(4000)};
  const std::vector<Member> members = {
      {"a", t0, seconds(15), milliseconds(0)},
      {"b", t0 - seconds(2), seconds(15), milliseconds(1900)},    // renews every retry period
      {"c", t0 - seconds(16), seconds(15), milliseconds(16000)},  // killed 16 s ago
      {"d", t0 - seconds(4), seconds(15), milliseconds(4000)},    // just stalled
  };
  const std::set<std::string> live = LiveMembers(members, "a", t0, liveness);
  EXPECT_EQ(live, (std::set<std::string>{"a", "b"}));
  // a and b took c's shards (expired): 2 each. The census counts the live members (holding
  // nothing unless a live shard Lease names them): nobody is below floor, nobody gives back.
  ShardCensus census{4, {}, 0};
  for (const std::string& m : live) census.held[m] = 0;
  census.held["a"] = census.held["b"] = 2;
  for (const char* r : {"a", "b"}) {
    EXPECT_FALSE(NextShareStep(census, r).give_back) << r;
    EXPECT_FALSE(NextShareStep(census, r).take) << r;
  }
}

TEST(ShardsTest, ALateReplicaIsGivenAShareOneShardAtATime) {
  // Two replicas hold 4 shards; c joins with none. Both a and b are at ceil(4/3) = 2, but c is
  // below floor(4/3) = 1 and nothing is free: only a (most shards, smaller name) gives back.
  ShardCensus census{4, {{"a", 2}, {"b", 2}, {"c", 0}}, 0};
  EXPECT_TRUE(NextShareStep(census, "a").give_back);
  EXPECT_FALSE(NextShareStep(census, "b").give_back);
  EXPECT_FALSE(NextShareStep(census, "c").give_back);
  EXPECT_FALSE(NextShareStep(census, "c").take);  // nothing free yet
  // a gave one back: c takes it, a and b (at floor, c starving) do not.
  census = {4, {{"a", 1}, {"b", 2}, {"c", 0}}, 1};
  EXPECT_TRUE(NextShareStep(census, "c").take);
  EXPECT_FALSE(NextShareStep(census, "a").take);
  EXPECT_FALSE(NextShareStep(census, "b").take);
  EXPECT_FALSE(NextShareStep(census, "b").give_back);
  // c did not take it for a lease duration (stuck, though its member Lease is renewed): a
  // replica below ceil takes it rather than leave the shard without a holder.
  census = {4, {{"a", 1}, {"b", 2}, {"c", 0}}, 1, 1};
  EXPECT_TRUE(NextShareStep(census, "a").take);
  EXPECT_FALSE(NextShareStep(census, "b").take);
  // Balanced: nobody moves.
  census = {4, {{"a", 1}, {"b", 2}, {"c", 1}}, 0};
  for (const char* r : {"a", "b", "c"}) {
    EXPECT_FALSE(NextShareStep(census, r).take) << r;
    EXPECT_FALSE(NextShareStep(census, r).give_back) << r;
  }
}

TEST(ShardsTest, BeyondTheCeilingGivesBackAndFreeShardsAreTakenUpToIt) {
  // One replica held all 4; a second appears: 4 > ceil(4/2) = 2, one back per round.
  ShardCensus census{4, {{"a", 4}, {"b", 0}}, 0};
  EXPECT_TRUE(NextShareStep(census, "a").give_back);
  census = {4, {{"a", 3}, {"b", 1}}, 0};
  EXPECT_TRUE(NextShareStep(census, "a").give_back);
  census = {4, {{"a", 2}, {"b", 2}}, 0};
  EXPECT_FALSE(NextShareStep(census, "a").give_back);
  // Starting together with nothing held: everyone takes up to floor first, then up to ceil.
  census = {5, {{"a", 0}, {"b", 0}}, 5};
  EXPECT_TRUE(NextShareStep(census, "a").take);
  census = {5, {{"a", 2}, {"b", 1}}, 2};
  EXPECT_FALSE(NextShareStep(census, "a").take);  // b is below floor(5/2) = 2
  EXPECT_TRUE(NextShareStep(census, "b").take);
  census = {5, {{"a", 2}, {"b", 2}}, 1};
  EXPECT_TRUE(NextShareStep(census, "a").take);  // up to ceil(5/2) = 3
  // A replica missing from the census counts itself, with nothing held (a is starving it).
  EXPECT_FALSE(NextShareStep({2, {{"a", 2}}, 0}, "z").take);
  EXPECT_FALSE(NextShareStep({2, {{"a", 2}}, 0}, "a").give_back);
  EXPECT_TRUE(NextShareStep({2, {{"a", 2}, {"z", 0}}, 0}, "a").give_back);
}

}  // namespace
}  // namespace tr::core
