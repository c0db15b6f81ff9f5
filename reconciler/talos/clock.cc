#include "reconciler/talos/clock.h"

#include <condition_variable>
#include <mutex>

namespace tr::reconciler::talos {

Clock::TimePoint SystemClock::Now() const { return std::chrono::steady_clock::now(); }

bool SystemClock::SleepFor(std::chrono::nanoseconds duration, std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  const auto until = std::chrono::steady_clock::now() + duration;
  cv.wait_until(lock, stop, until, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace tr::reconciler::talos
