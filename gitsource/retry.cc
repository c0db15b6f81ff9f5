#include "gitsource/retry.h"

#include <algorithm>
#include <condition_variable>

namespace tr::gitsource {

std::chrono::system_clock::time_point SystemWallClock::Now() {
  return std::chrono::system_clock::now();
}

bool ThreadSleeper::SleepFor(std::chrono::milliseconds duration, std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait_for(lock, stop, duration, [] { return false; });
  return !stop.stop_requested();
}

SeededRandomSource::SeededRandomSource() : engine_(std::random_device{}()) {}

double SeededRandomSource::Uniform() {
  MutexLock lock(mu_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine_);
}

std::chrono::milliseconds JitteredBackoff(const BackoffPolicy& policy, int retry,
                                          RandomSource& random) {
  std::int64_t step = std::max<std::int64_t>(policy.initial.count(), 1);
  for (int i = 1; i < retry && step < policy.max.count(); ++i) step *= 2;
  step = std::min<std::int64_t>(step, policy.max.count());
  const double fraction = std::clamp(random.Uniform(), 0.0, 1.0);
  const auto jitter = static_cast<std::int64_t>(static_cast<double>(step / 2) * fraction);
  return std::chrono::milliseconds(step - step / 2 + jitter);
}

}  // namespace tr::gitsource
