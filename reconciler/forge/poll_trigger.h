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

namespace tr::reconciler::forge {

class PollTrigger {
 public:
  enum class Wake { kTriggered, kTimedOut, kStopped };

  // Asks for a poll as soon as the loop can run one; returns at once.
  void Trigger();

  // Waits until `timeout` passes or Trigger() was called since the last wait, whichever comes
  // first, and clears the trigger. kStopped when `stop` was requested.
  Wake WaitFor(std::chrono::milliseconds timeout, std::stop_token stop);

 private:
  std::mutex mu_;
  std::condition_variable_any cv_;
  bool triggered_ = false;
};

}  // namespace tr::reconciler::forge
