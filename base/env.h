// The environment: wall-clock and monotonic time, sleeping, timed waits for an event and
// randomness behind one interface (after leveldb's Env), so every wait, deadline, backoff and
// jitter in gitsource and reconciler can run in simulated time in tests. `Env::Default()` is the
// one real implementation, and only the composition root (reconciler/app, main) names it: every
// object below it is handed an `Env&`. The simulated one is tests/support/simulated_env.h.
// Nothing else in base, core, gitsource or reconciler reads a clock, sleeps, waits with a
// timeout or seeds a random engine: tests/gitsource/env_test.cc greps the tree for it. (core
// takes time as a value and needs none of this.)
//
// Waiting for an event: code that waits on a condition variable waits through Wait/WaitFor,
// with the lock held and a predicate, exactly as with condition_variable_any (the notifying side
// changes the state under the lock and notifies the variable as usual). The deadline is on the
// monotonic clock, so a simulated environment ends the wait when a test moves its time, and can
// tell when every thread of a component is waiting.
//
// Thread-safety: every implementation is safe from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <random>
#include <stop_token>

#include "absl/functional/function_ref.h"
#include "base/mutex.h"

namespace tr {

class Env {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  using Instant = std::chrono::steady_clock::time_point;  // monotonic
  static constexpr Instant kNoDeadline = Instant::max();

  virtual ~Env() = default;

  // The process's real environment: the system clock, a stoppable sleep on the calling thread,
  // and an engine seeded once from the operating system.
  static Env& Default();

  // Wall-clock time: commit timestamps, status times, deadlines and due times.
  virtual TimePoint Now() = 0;
  // Monotonic time: it never goes back, whatever the wall clock does. Deadlines of waits.
  virtual Instant Monotonic() = 0;
  // Waits for `duration` or until `stop` is requested. Returns false when stopped early.
  virtual bool SleepFor(std::chrono::nanoseconds duration, std::stop_token stop) = 0;
  // A uniformly distributed value in [0, 1).
  virtual double Uniform() = 0;

  // With `lock` held, waits on `cv` until `ready()` holds, `deadline` (kNoDeadline: none) passes
  // on Monotonic(), or `stop` is requested; returns ready(), read under the lock. Like
  // condition_variable_any::wait_until, it releases the lock while it waits, may wake spuriously
  // (ready is read again) and returns with the lock held. `ready` reads state guarded by the
  // lock's mutex; whoever changes that state notifies `cv`.
  virtual bool Wait(std::condition_variable_any& cv, MutexLock& lock, std::stop_token stop,
                    Instant deadline, absl::FunctionRef<bool()> ready) = 0;
  // Wait with the deadline `timeout` from now (a negative one has passed).
  bool WaitFor(std::condition_variable_any& cv, MutexLock& lock, std::stop_token stop,
               std::chrono::nanoseconds timeout, absl::FunctionRef<bool()> ready);
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
