// Waiting in tests for something another thread or process does: poll a predicate until it
// holds or a deadline passes. The one place tests wait for a condition; the time and the pause
// between polls come from the real environment (tr::Env::Default()).
//
// Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <functional>

#include "base/env.h"

namespace tr::test_support {

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
