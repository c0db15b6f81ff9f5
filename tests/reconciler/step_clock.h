// A clock for tests that moves only when slept on: each sleep advances it at once, so waits
// with deadlines (a drain's timeout) run in no real time.
#pragma once

#include <chrono>
#include <stop_token>

#include "gitsource/retry.h"

namespace tr::reconciler::testing {

class StepClock final : public gitsource::WallClock, public gitsource::Sleeper {
 public:
  std::chrono::system_clock::time_point Now() override { return now; }
  bool SleepFor(std::chrono::milliseconds d, std::stop_token stop) override {
    now += d;
    return !stop.stop_requested();
  }
  std::chrono::system_clock::time_point now{};
};

}  // namespace tr::reconciler::testing
