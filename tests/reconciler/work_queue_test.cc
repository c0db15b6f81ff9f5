#include "reconciler/loop/work_queue.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "fmt/format.h"

namespace tr::reconciler {
namespace {

using namespace std::chrono_literals;
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
  WorkQueue q;
  std::stop_source stop;
  std::optional<std::string> got;
  std::thread taker([&] { got = q.Take(Env::Default(), stop.get_token()); });
  q.AddAt("x", Env::Default().Now());
  taker.join();
  EXPECT_EQ(got, "x");
  std::thread idle([&] { got = q.Take(Env::Default(), stop.get_token()); });
  stop.request_stop();
  idle.join();
  EXPECT_EQ(got, std::nullopt);
}

TEST(WorkQueueTest, BlockingTakeWakesForAnEarlierKey) {
  WorkQueue q;
  q.AddAt("late", Env::Default().Now() + 1h);
  std::stop_source stop;
  std::optional<std::string> got;
  std::thread taker([&] { got = q.Take(Env::Default(), stop.get_token()); });
  q.AddAt("now", Env::Default().Now());
  taker.join();
  EXPECT_EQ(got, "now");
}

TEST(WorkQueueTest, ManyIdleWorkersTakeEveryKeyOnceNowAndWhenDue) {
  // Idle workers wait for the timer post one at a time: a burst of keys due now, then keys
  // that fall due later with no change to wake anyone, must all be taken, each once.
  WorkQueue q;
  std::stop_source stop;
  std::mutex mu;
  std::multiset<std::string> taken;
  std::vector<std::jthread> workers;
  for (int i = 0; i < 8; ++i) {
    workers.emplace_back([&] {
      while (std::optional<std::string> key = q.Take(Env::Default(), stop.get_token())) {
        std::lock_guard lock(mu);
        taken.insert(*key);
      }  // never Done: each key is taken at most once
    });
  }
  const auto now = Env::Default().Now();
  for (int i = 0; i < 6; ++i) q.AddAt(fmt::format("now-{}", i), now);
  for (int i = 0; i < 6; ++i) q.AddAt(fmt::format("later-{}", i), now + 50ms * (i + 1));
  const auto deadline = Env::Default().Now() + 10s;
  while (Env::Default().Now() < deadline) {
    {
      std::lock_guard lock(mu);
      if (taken.size() == 12) break;
    }
    std::this_thread::yield();
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
