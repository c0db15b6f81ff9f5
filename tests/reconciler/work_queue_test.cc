#include "reconciler/loop/work_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "fmt/format.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler {
namespace {

using namespace std::chrono_literals;
using test_support::SimulatedEnv;
const WorkQueue::TimePoint kT0 = WorkQueue::TimePoint{} + 1000h;

TEST(WorkQueueTest, HandsOutDueKeysEarliestFirst) {
  WorkQueue q;
  q.AddAt("b", kT0 + 2s);
  q.AddAt("a", kT0 + 1s);
  q.AddAt("c", kT0 + 10s);
  EXPECT_EQ(q.TryTake(kT0), std::nullopt);
  EXPECT_EQ(q.TryTake(kT0 + 5s), "a");
  EXPECT_EQ(q.TryTake(kT0 + 5s), "b");
  EXPECT_EQ(q.TryTake(kT0 + 5s), std::nullopt);
  EXPECT_EQ(q.NextDue(), kT0 + 10s);
}

TEST(WorkQueueTest, RepeatedAddsCoalesceToTheEarliest) {
  WorkQueue q;
  q.AddAt("a", kT0 + 10s);
  q.AddAt("a", kT0 + 1s);
  q.AddAt("a", kT0 + 20s);
  EXPECT_EQ(q.NextDue(), kT0 + 1s);
  EXPECT_EQ(q.TryTake(kT0 + 1s), "a");
  EXPECT_EQ(q.TryTake(kT0 + 30s), std::nullopt);
}

TEST(WorkQueueTest, KeyInProcessIsNotHandedOutTwiceButNotLost) {
  WorkQueue q;
  q.AddAt("a", kT0);
  ASSERT_EQ(q.TryTake(kT0), "a");
  q.AddAt("a", kT0);  // a webhook while reconciling
  EXPECT_EQ(q.TryTake(kT0), std::nullopt);
  q.Done("a");
  EXPECT_EQ(q.TryTake(kT0), "a");
}

TEST(WorkQueueTest, BlockingTakeWakesOnAddAndStops) {
  SimulatedEnv env;
  WorkQueue q;
  std::stop_source stop;
  std::optional<std::string> got;
  std::thread taker([&] { got = q.Take(env, stop.get_token()); });
  q.AddAt("x", env.Now());
  taker.join();
  EXPECT_EQ(got, "x");
  std::thread idle([&] { got = q.Take(env, stop.get_token()); });
  ASSERT_TRUE(env.Settle(1));
  stop.request_stop();
  idle.join();
  EXPECT_EQ(got, std::nullopt);
}

TEST(WorkQueueTest, BlockingTakeWakesForAnEarlierKey) {
  SimulatedEnv env;
  WorkQueue q;
  q.AddAt("late", env.Now() + 1h);
  std::stop_source stop;
  std::optional<std::string> got;
  std::thread taker([&] { got = q.Take(env, stop.get_token()); });
  ASSERT_TRUE(env.Settle(1));  // waiting for the late key
  q.AddAt("now", env.Now());
  taker.join();
  EXPECT_EQ(got, "now");
}

TEST(WorkQueueTest, BlockingTakeWakesWhenTheClockReachesTheDueTime) {
  SimulatedEnv env;
  WorkQueue q;
  q.AddAt("later", env.Now() + 1h);
  std::optional<std::string> got;
  std::thread taker([&] { got = q.Take(env, {}); });
  ASSERT_TRUE(env.Settle(1));
  env.Advance(59min);
  ASSERT_TRUE(env.Settle(1));  // not yet
  env.Advance(1min);
  taker.join();
  EXPECT_EQ(got, "later");
}

TEST(WorkQueueTest, ManyIdleWorkersTakeEveryKeyOnceNowAndWhenDue) {
  // Idle workers wait for the timer post one at a time: a burst of keys due now, then keys
  // that fall due later with no change to wake anyone, must all be taken, each once.
  SimulatedEnv env;
  WorkQueue q;
  std::stop_source stop;
  Mutex mu;
  std::multiset<std::string> taken;
  auto count = [&](const std::string& prefix) {
    MutexLock lock(mu);
    return std::count_if(taken.begin(), taken.end(),
                         [&](const std::string& k) { return k.starts_with(prefix); });
  };
  constexpr int kWorkers = 8;
  std::vector<std::jthread> workers;
  for (int i = 0; i < kWorkers; ++i) {
    workers.emplace_back([&] {
      while (std::optional<std::string> key = q.Take(env, stop.get_token())) {
        MutexLock lock(mu);
        taken.insert(*key);
      }  // never Done: each key is taken at most once
    });
  }
  const auto now = env.Now();
  for (int i = 0; i < 6; ++i) q.AddAt(fmt::format("now-{}", i), now);
  for (int i = 0; i < 6; ++i) q.AddAt(fmt::format("later-{}", i), now + 50ms * (i + 1));
  ASSERT_TRUE(env.Settle(kWorkers));  // every worker idle again: what was due is taken
  EXPECT_EQ(count("now-"), 6);
  EXPECT_EQ(count("later-"), 0);
  for (int i = 1; i <= 6; ++i) {
    env.Advance(50ms);
    ASSERT_TRUE(env.Settle(kWorkers));
    EXPECT_EQ(count("later-"), i) << "after " << 50 * i << " ms";
  }
  stop.request_stop();
  workers.clear();
  ASSERT_EQ(taken.size(), 12u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(taken.count(fmt::format("now-{}", i)), 1u);
    EXPECT_EQ(taken.count(fmt::format("later-{}", i)), 1u);
  }
}

}  // namespace
}  // namespace tr::reconciler
