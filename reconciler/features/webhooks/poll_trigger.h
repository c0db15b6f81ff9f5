// A "poll now" signal for the repository poll loop: a push webhook pulls the next poll forward
// instead of waiting out the poll interval. Triggers that arrive while a poll runs, or many at
// once, coalesce into one more poll.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>

#include "base/env.h"
#include "base/mutex.h"

namespace tr::reconciler::webhooks {

class PollTrigger {
 public:
  enum class Wake { kTriggered, kTimedOut, kStopped };

  // Asks for a poll as soon as the loop can run one; returns at once.
  void Trigger();

  // Waits until `timeout` passes or Trigger() was called since the last wait, whichever comes
  // first, and clears the trigger. kStopped when `stop` was requested.
  Wake WaitFor(std::chrono::milliseconds timeout, std::stop_token stop);

 private:
  Mutex mu_;
  std::condition_variable_any cv_;
  bool triggered_ ABSL_GUARDED_BY(mu_) = false;
};

// The poll loop's environment: `base`'s clock and randomness, but a sleep ends early when
// `trigger` fires.
class TriggeredEnv final : public Env {
 public:
  TriggeredEnv(Env& base, PollTrigger& trigger) : base_(base), trigger_(trigger) {}
  TimePoint Now() override { return base_.Now(); }
  double Uniform() override { return base_.Uniform(); }
  // False only when `stop` was requested.
  bool SleepFor(std::chrono::nanoseconds duration, std::stop_token stop) override {
    return trigger_.WaitFor(std::chrono::ceil<std::chrono::milliseconds>(duration), stop) !=
           PollTrigger::Wake::kStopped;
  }

 private:
  Env& base_;
  PollTrigger& trigger_;
};

}  // namespace tr::reconciler::webhooks
