#include "reconciler/work_queue.h"

#include <gtest/gtest.h>

#include <thread>

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

}  // namespace
}  // namespace tr::reconciler
