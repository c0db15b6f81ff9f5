// The time and chance the status writer depends on, behind interfaces so tests drive them:
// a wall clock for commit timestamps, a sleeper for backoff between push attempts, and a
// source of randomness for jitter. `JitteredBackoff` turns an attempt number into a delay.
//
// The real implementations are thread-safe; fakes in tests need only be thread-compatible
// when a single writer uses them.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <stop_token>

#include "gitsource/mutex.h"

namespace tr::gitsource {

class WallClock {
 public:
  virtual ~WallClock() = default;
  virtual std::chrono::system_clock::time_point Now() = 0;
};

class Sleeper {
 public:
  virtual ~Sleeper() = default;
  // Waits for `duration` or until `stop` is requested. Returns false when stopped early.
  virtual bool SleepFor(std::chrono::milliseconds duration, std::stop_token stop) = 0;
};

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // A uniformly distributed value in [0, 1).
  virtual double Uniform() = 0;
};

class SystemWallClock final : public WallClock {
 public:
  std::chrono::system_clock::time_point Now() override;
};

class ThreadSleeper final : public Sleeper {
 public:
  bool SleepFor(std::chrono::milliseconds duration, std::stop_token stop) override;
};

class SeededRandomSource final : public RandomSource {
 public:
  // Seeded from std::random_device.
  SeededRandomSource();
  double Uniform() override;

 private:
  Mutex mu_;
  std::mt19937_64 engine_ ABSL_GUARDED_BY(mu_);
};

struct BackoffPolicy {
  std::chrono::milliseconds initial{200};
  std::chrono::milliseconds max{10'000};
  int max_attempts = 8;  // attempts in total, the first included
};

// The delay before retry number `retry` (1 for the first retry): the exponential step
// min(max, initial * 2^(retry-1)) with "equal jitter", half fixed and half random, so
// replicas that collided once do not collide again in lockstep.
std::chrono::milliseconds JitteredBackoff(const BackoffPolicy& policy, int retry,
                                          RandomSource& random);

}  // namespace tr::gitsource
