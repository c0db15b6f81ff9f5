// Waiting in tests for something another thread or process does.
//
// Watched<T>: state that other threads change (a callback's calls, connections accepted) and a
// test waits on. The changing side changes it through Change(), which wakes every waiter, so
// the wait is on the event itself. Prefer it wherever the test owns the side that changes.
//
// Changes: a count of the changes of something a test reads through its own calls (a fake
// server's state, changed by each request it serves). Await checks a condition at once and
// again after each change, so it too waits on the event, not on a clock.
//
// WaitUntil: polls a predicate until it holds or a deadline passes, for what nothing of the
// test's own signals (another process, a file, a real socket). The time and the pause between
// polls come from the real environment (tr::Env::Default()).
//
// Thread-safe: a Watched may be changed, read and waited on from any thread; WaitUntil has no
// shared state.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <utility>

#include "base/env.h"
#include "base/mutex.h"

namespace tr::test_support {

template <typename T>
class Watched {
 public:
  Watched() = default;
  explicit Watched(T initial) : value_(std::move(initial)) {}
  Watched(const Watched&) = delete;
  Watched& operator=(const Watched&) = delete;

  // Runs `change(T&)` under the lock, then wakes every waiter to look again.
  template <typename F>
  void Change(F&& change) {
    MutexLock lock(mu_);
    std::forward<F>(change)(value_);
    changed_.notify_all();
  }
  // A copy of the value, read under the lock.
  T Get() const {
    MutexLock lock(mu_);
    return value_;
  }
  // True once `ready(const T&)` holds (read under the lock at each change), false when
  // `within` passes first: assert on it, a wait that timed out is a failure to report.
  bool WaitFor(const std::function<bool(const T&)>& ready,
               std::chrono::milliseconds within = std::chrono::seconds(30)) const {
    MutexLock lock(mu_);
    const auto holds = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ready(value_); };
    return Env::Default().WaitFor(changed_, lock, {}, within, holds);
  }

 private:
  mutable Mutex mu_;
  mutable std::condition_variable_any changed_;
  T value_ ABSL_GUARDED_BY(mu_){};
};

class Changes {
 public:
  // One more change; call it once the change is visible to the condition's reads.
  void Count() {
    count_.Change([](std::uint64_t& n) { ++n; });
  }
  // True once `done()` holds, checked now and after each change (with no lock of this object
  // held); false when `within` passes first.
  bool Await(std::chrono::milliseconds within, const std::function<bool()>& done) const {
    Env& env = Env::Default();
    const Env::Instant deadline = env.Monotonic() + within;
    while (true) {
      const std::uint64_t seen = count_.Get();
      if (done()) return true;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - env.Monotonic());
      if (left.count() <= 0) return false;
      if (!count_.WaitFor([seen](std::uint64_t n) { return n != seen; }, left)) return done();
    }
  }

 private:
  Watched<std::uint64_t> count_;
};

// Calls `done` until it returns true (then true) or `within` has passed (then false), pausing
// `poll` between calls. Assert on the result: a wait that timed out is a failure to report.
inline bool WaitUntil(const std::function<bool()>& done,
                      std::chrono::milliseconds within = std::chrono::seconds(30),
                      std::chrono::milliseconds poll = std::chrono::milliseconds(2)) {
  Env& env = Env::Default();
  const Env::TimePoint deadline = env.Now() + within;
  while (!done()) {
    if (env.Now() >= deadline) return false;
    (void)env.SleepFor(poll, {});
  }
  return true;
}

}  // namespace tr::test_support
