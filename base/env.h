// The environment: wall-clock time, sleeping and randomness behind one interface (after
// leveldb's Env), so every wait, deadline, backoff and jitter in gitsource and reconciler can
// run in simulated time in tests. `Env::Default()` is the one real implementation; the
// simulated one is tests/support/simulated_env.h. Nothing else in base, core, gitsource or
// reconciler reads a clock, sleeps or seeds a random engine: tests/gitsource/env_test.cc greps
// the tree for it. (core takes time as a value and needs none of this.)
//
// Waiting on a condition variable is not part of the interface: code that waits for an event
// with a timeout computes the timeout from Now() and waits with wait_for, which measures the
// duration itself.
//
// Thread-safety: Env::Default() is safe from any thread. Simulated environments need only be
// thread-compatible when one thread uses them.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <stop_token>

#include "base/mutex.h"

namespace tr {

class Env {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  virtual ~Env() = default;

  // The process's real environment: the system clock, a stoppable sleep on the calling thread,
  // and an engine seeded once from the operating system.
  static Env& Default();

  // Wall-clock time: commit timestamps, status times, deadlines and due times.
  virtual TimePoint Now() = 0;
  // Waits for `duration` or until `stop` is requested. Returns false when stopped early.
  virtual bool SleepFor(std::chrono::nanoseconds duration, std::stop_token stop) = 0;
  // A uniformly distributed value in [0, 1).
  virtual double Uniform() = 0;
};

struct BackoffPolicy {
  std::chrono::milliseconds initial{200};
  std::chrono::milliseconds max{10'000};
  int max_attempts = 8;  // attempts in total, the first included
};

// The delay before retry number `retry` (1 for the first retry): the exponential step
// min(max, initial * 2^(retry-1)) with "equal jitter", half fixed and half random, so
// replicas that collided once do not collide again in lockstep. The only backoff in the tree.
std::chrono::milliseconds JitteredBackoff(const BackoffPolicy& policy, int retry, Env& env);

// `base` spread uniformly over base * (1 ± spread), spread in [0, 1]: periodic work (polls,
// resyncs) of many replicas or clusters that started together drifts apart instead of
// running in lockstep. The mean stays `base`.
std::chrono::milliseconds Spread(std::chrono::milliseconds base, double spread, Env& env);

}  // namespace tr
