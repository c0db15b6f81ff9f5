#include "reconciler/loop/poll_trigger.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "tests/support/simulated_env.h"

namespace tr::reconciler {
namespace {

using Wake = PollTrigger::Wake;
using test_support::SimulatedEnv;
using namespace std::chrono_literals;

TEST(PollTriggerTest, ATriggerBeforeTheWaitEndsItAtOnceAndManyCoalesceIntoOne) {
  SimulatedEnv env;
  PollTrigger trigger(env);
  trigger.Trigger();
  trigger.Trigger();
  trigger.Trigger();
  EXPECT_EQ(trigger.WaitFor(1h, {}), Wake::kTriggered);
  EXPECT_EQ(trigger.WaitFor(0ms, {}), Wake::kTimedOut);
}

TEST(PollTriggerTest, ATriggerWakesAWaiterBeforeTheIntervalPasses) {
  SimulatedEnv env;
  PollTrigger trigger(env);
  std::promise<Wake> woke;
  std::jthread waiter([&] { woke.set_value(trigger.WaitFor(1h, {})); });
  ASSERT_TRUE(env.Settle(1));  // waiting, the interval not over
  trigger.Trigger();
  EXPECT_EQ(woke.get_future().get(), Wake::kTriggered);
}

TEST(PollTriggerTest, TheWaitEndsWhenTheIntervalPasses) {
  SimulatedEnv env;
  PollTrigger trigger(env);
  std::promise<Wake> woke;
  std::jthread waiter([&] { woke.set_value(trigger.WaitFor(1h, {})); });
  ASSERT_TRUE(env.Settle(1));
  env.Advance(59min);
  ASSERT_TRUE(env.Settle(1));  // still waiting
  env.Advance(1min);
  EXPECT_EQ(woke.get_future().get(), Wake::kTimedOut);
}

TEST(PollTriggerTest, StopEndsTheWait) {
  SimulatedEnv env;
  PollTrigger trigger(env);
  std::stop_source stop;
  std::promise<Wake> woke;
  std::jthread waiter([&] { woke.set_value(trigger.WaitFor(1h, stop.get_token())); });
  stop.request_stop();
  EXPECT_EQ(woke.get_future().get(), Wake::kStopped);
}

}  // namespace
}  // namespace tr::reconciler
