#include "reconciler/loop/poll_trigger.h"

namespace tr::reconciler {

void PollTrigger::Trigger() {
  MutexLock lock(mu_);
  triggered_ = true;
  cv_.notify_all();
}

PollTrigger::Wake PollTrigger::WaitFor(std::chrono::nanoseconds timeout, std::stop_token stop) {
  MutexLock lock(mu_);
  const bool triggered = env_.WaitFor(
      cv_, lock, stop, timeout, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return triggered_; });
  triggered_ = false;
  if (stop.stop_requested()) return Wake::kStopped;
  return triggered ? Wake::kTriggered : Wake::kTimedOut;
}

}  // namespace tr::reconciler
