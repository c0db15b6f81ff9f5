#include "base/env.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>

namespace tr {
namespace {

class SystemEnv final : public Env {
 public:
  SystemEnv() : engine_(std::random_device{}()) {}

  TimePoint Now() override { return std::chrono::system_clock::now(); }
  Instant Monotonic() override { return std::chrono::steady_clock::now(); }

  bool SleepFor(std::chrono::nanoseconds duration, std::stop_token stop) override {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    cv.wait_for(lock, stop, duration, [] { return false; });
    return !stop.stop_requested();
  }

  bool Wait(std::condition_variable_any& cv, MutexLock& lock, std::stop_token stop,
            Instant deadline, absl::FunctionRef<bool()> ready) override {
    if (deadline == kNoDeadline) return cv.wait(lock, std::move(stop), ready);
    return cv.wait_until(lock, std::move(stop), deadline, ready);
  }

  double Uniform() override {
    MutexLock lock(mu_);
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine_);
  }

 private:
  Mutex mu_;
  std::mt19937_64 engine_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

Env& Env::Default() {
  static SystemEnv* const env = new SystemEnv();  // never destroyed: used by detached work
  return *env;
}

bool Env::WaitFor(std::condition_variable_any& cv, MutexLock& lock, std::stop_token stop,
                  std::chrono::nanoseconds timeout, absl::FunctionRef<bool()> ready) {
  const Instant now = Monotonic();
  const auto room = std::chrono::duration_cast<std::chrono::nanoseconds>(kNoDeadline - now);
  const Instant deadline =
      timeout >= room ? kNoDeadline : now + std::chrono::duration_cast<Instant::duration>(timeout);
  return Wait(cv, lock, std::move(stop), deadline, ready);
}

std::chrono::milliseconds JitteredBackoff(const BackoffPolicy& policy, int retry, Env& env) {
  std::int64_t step = std::max<std::int64_t>(policy.initial.count(), 1);
  for (int i = 1; i < retry && step < policy.max.count(); ++i) step *= 2;
  step = std::min<std::int64_t>(step, policy.max.count());
  const double fraction = std::clamp(env.Uniform(), 0.0, 1.0);
  const auto jitter = static_cast<std::int64_t>(static_cast<double>(step / 2) * fraction);
  return std::chrono::milliseconds(step - step / 2 + jitter);
}

std::chrono::milliseconds Spread(std::chrono::milliseconds base, double spread, Env& env) {
  spread = std::clamp(spread, 0.0, 1.0);
  const double factor = 1.0 - spread + 2.0 * spread * std::clamp(env.Uniform(), 0.0, 1.0);
  return std::chrono::milliseconds(std::llround(static_cast<double>(base.count()) * factor));
}

}  // namespace tr
