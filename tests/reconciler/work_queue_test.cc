#include "reconciler/loop/work_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
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

// A change that came while its key was processed runs it again only when it came after the
// processing's last look began; an AddAt (a webhook, a requeue) always does.
TEST(WorkQueueTest, AChangeTheLastLookSawRunsNothingAgain) {
  const Env::Instant look = Env::Instant{} + 100s;
  WorkQueue q;
  q.AddAt("a", kT0);
  ASSERT_EQ(q.TryTake(kT0), "a");
  q.AddChange("a", kT0, look - 5ms);  // before the look began: it saw it
  q.AddChange("a", kT0, look - 1ms);
  q.Done("a", look);
  EXPECT_EQ(q.TryTake(kT0), std::nullopt);
  EXPECT_EQ(q.NextDue(), std::nullopt);

  ASSERT_EQ((q.AddAt("a", kT0), q.TryTake(kT0)), "a");
  q.AddChange("a", kT0, look - 1ms);
  q.AddChange("a", kT0 + 1s, look);  // as the look began: it may not have seen it
  q.Done("a", look);
  EXPECT_EQ(q.TryTake(kT0), "a") << "due at the earliest change's time";

  q.AddChange("a", kT0, look - 1ms);  // the key is processed: after Done
  q.Done("a");                        // no look: whatever changed is looked at
  EXPECT_EQ(q.TryTake(kT0), "a");

  q.AddChange("a", kT0, look - 1ms);
  q.AddAt("a", kT0 + 2s);  // the reconcile's requeue
  q.Done("a", look);
  EXPECT_EQ(q.TryTake(kT0), std::nullopt);
  EXPECT_EQ(q.TryTake(kT0 + 2s), "a");

  q.Done("a", look);
  q.AddChange("a", kT0, look - 1ms);  // not processed: queued as AddAt
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

TEST(WorkQueueTest, AWorkerBackFromItsKeyKeepsTheTimerSoOneClusterWakesOneWorker) {
  // One key resynced alone, four workers taking it as the controller's do (DoneAndTake): the
  // worker that took it keeps the timer for its next due time, so the same worker takes it
  // every time and the other three sleep through.
  SimulatedEnv env;
  WorkQueue q;
  std::stop_source stop;
  Mutex mu;
  std::map<std::thread::id, int> takes_by_worker;
  std::vector<std::jthread> workers;
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&] {
      std::optional<std::string> key = q.Take(env, stop.get_token());
      while (key) {
        {
          MutexLock lock(mu);
          ++takes_by_worker[std::this_thread::get_id()];
        }
        q.AddAt(*key, env.Now() + 1s);
        key = q.DoneAndTake(*key, std::nullopt, env, stop.get_token());
      }
    });
  }
  ASSERT_TRUE(env.Settle(4));  // every worker in Take, one of them keeping the timer
  q.AddAt("one", env.Now());
  for (int round = 1; round <= 5; ++round) {
    ASSERT_TRUE(env.Settle(4));
    {
      MutexLock lock(mu);
      int takes = 0;
      for (const auto& [worker, n] : takes_by_worker) takes += n;
      EXPECT_EQ(takes, round);
    }
    env.Advance(1s);
  }
  stop.request_stop();
  workers.clear();
  EXPECT_EQ(takes_by_worker.size(), 1u) << "the key went from worker to worker";
}

TEST(WorkQueueTest, AKeyAddedWhileEveryOtherWorkerSleepsWakesOne) {
  // The only key taken leaves the timer post free; a key added then must still wake an idle
  // worker while the first is busy with its key (it waits on a gate outside the env). The
  // test waits for the second take on its own condition, not with Settle, which wakes every
  // waiter once and so would hide a lost wake-up.
  SimulatedEnv env;
  WorkQueue q;
  std::stop_source stop;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::mutex mu;
  std::condition_variable took;
  std::vector<std::string> taken;
  std::vector<std::jthread> workers;
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      while (std::optional<std::string> key = q.Take(env, stop.get_token())) {
        {
          std::lock_guard lock(mu);
          taken.push_back(*key);
        }
        took.notify_all();
        if (*key == "first") released.wait();
      }
    });
  }
  ASSERT_TRUE(env.Settle(3));  // one keeps the timer, two wait for the post
  q.AddAt("first", env.Now());
  ASSERT_TRUE(env.Settle(2));  // one worker busy with "first", two idle, the post free
  q.AddAt("second", env.Now());
  {
    std::unique_lock lock(mu);
    // A generous bound: only a lost wake-up comes near it.
    took.wait_for(lock, 60s, [&] { return taken.size() == 2; });
    EXPECT_EQ(taken, (std::vector<std::string>{"first", "second"}));
  }
  release.set_value();
  stop.request_stop();
  workers.clear();
}

TEST(WorkQueueTest, AKeyRequeuedAtDoneIsTakenByAnotherWorkerWhenTheCallerDoesNotTake) {
  SimulatedEnv env;
  WorkQueue q;
  std::stop_source stop;
  std::optional<std::string> got;
  q.AddAt("a", env.Now());
  ASSERT_EQ(q.TryTake(env.Now()), "a");
  std::thread taker([&] { got = q.Take(env, stop.get_token()); });
  ASSERT_TRUE(env.Settle(1));
  q.AddAt("a", env.Now());  // a webhook while reconciling
  q.Done("a");
  taker.join();
  EXPECT_EQ(got, "a");
}

}  // namespace
}  // namespace tr::reconciler
