// A "poll now" signal for the repository poll loop: a push webhook calls Trigger() and the
// poller's wait between polls (WaitFor, through the env) ends at once instead of waiting out the
// poll interval. Triggers that arrive while a poll runs, or many at once, coalesce into one
// more poll.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <stop_token>

#include "base/env.h"
#include "base/mutex.h"

namespace tr::reconciler {

class PollTrigger {
 public:
  enum class Wake { kTriggered, kTimedOut, kStopped };

  explicit PollTrigger(Env& env) : env_(env) {}

  // Asks for a poll as soon as the loop can run one; returns at once.
  void Trigger();

  // Waits until `timeout` passes on the env or Trigger() was called since the last wait,
  // whichever comes first, and clears the trigger. kStopped when `stop` was requested.
  Wake WaitFor(std::chrono::nanoseconds timeout, std::stop_token stop);

 private:
  Env& env_;
  Mutex mu_;
  std::condition_variable_any cv_;
  bool triggered_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tr::reconciler
