#include "reconciler/features/webhooks/poll_trigger.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace tr::reconciler::webhooks {
namespace {

using Wake = PollTrigger::Wake;
using namespace std::chrono_literals;

TEST(PollTriggerTest, ATriggerBeforeTheWaitEndsItAtOnceAndManyCoalesceIntoOne) {
  PollTrigger trigger;
  std::stop_source stop;
  trigger.Trigger();
  trigger.Trigger();
  trigger.Trigger();
  EXPECT_EQ(trigger.WaitFor(1h, stop.get_token()), Wake::kTriggered);
  EXPECT_EQ(trigger.WaitFor(1ms, stop.get_token()), Wake::kTimedOut);
}

TEST(PollTriggerTest, ATriggerWakesAWaiter) {
  PollTrigger trigger;
  std::stop_source stop;
  auto waited = std::async(std::launch::async, [&] { return trigger.WaitFor(1h, stop.get_token()); });
  trigger.Trigger();
  ASSERT_EQ(waited.wait_for(60s), std::future_status::ready);
  // A trigger that landed before the waiter started waiting is also kTriggered.
  EXPECT_EQ(waited.get(), Wake::kTriggered);
}

TEST(PollTriggerTest, StopEndsTheWait) {
  PollTrigger trigger;
  std::stop_source stop;
  auto waited = std::async(std::launch::async, [&] { return trigger.WaitFor(1h, stop.get_token()); });
  stop.request_stop();
  ASSERT_EQ(waited.wait_for(60s), std::future_status::ready);
  EXPECT_EQ(waited.get(), Wake::kStopped);
}

}  // namespace
}  // namespace tr::reconciler::webhooks
