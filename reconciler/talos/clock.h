// Time for the Talos client's waiting logic (the events follower): a monotonic now() and a
// cancellable sleep, injected so tests drive time by hand instead of sleeping.
//
// Thread-safety: SystemClock is safe from any thread.
#pragma once

#include <chrono>
#include <stop_token>

namespace tr::reconciler::talos {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  // Waits `duration` or until `stop` is requested. Returns false when stopped.
  virtual bool SleepFor(std::chrono::nanoseconds duration, std::stop_token stop) = 0;
};

// steady_clock and a condition-variable wait that wakes on the stop token.
class SystemClock final : public Clock {
 public:
  TimePoint Now() const override;
  bool SleepFor(std::chrono::nanoseconds duration, std::stop_token stop) override;
};

}  // namespace tr::reconciler::talos
