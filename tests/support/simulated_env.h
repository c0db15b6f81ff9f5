// The simulated environment for tests: a clock that moves only when a test moves it or code
// sleeps on it (each sleep advances it at once, so waits with deadlines, backoffs and drains
// run in no real time), a record of every sleep, and randomness that is either scripted (each
// Uniform() takes the next of `uniforms`, cycling) or a fixed-seed engine. The one stand-in for
// tr::Env; tests that need a special sleep (one that blocks on a gate) derive from it.
//
// Thread-compatible: one thread at a time (copyable, so a helper can return a configured one).
#pragma once

#include <chrono>
#include <cstddef>
#include <random>
#include <stop_token>
#include <vector>

#include "base/env.h"

namespace tr::test_support {

class SimulatedEnv : public Env {
 public:
  SimulatedEnv() = default;
  explicit SimulatedEnv(TimePoint start) : now_(start) {}

  TimePoint Now() override { return now_; }
  // Advances the clock by `duration` and records it. False when `stop` is requested or the
  // sleep budget is spent (a loop that sleeps between rounds ends after `sleep_budget` rounds).
  bool SleepFor(std::chrono::nanoseconds duration, std::stop_token stop) override {
    slept.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(duration));
    Advance(duration);
    return !stop.stop_requested() && slept.size() < sleep_budget;
  }
  double Uniform() override {
    if (!uniforms.empty()) return uniforms[next_uniform_++ % uniforms.size()];
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine_);
  }

  void Advance(std::chrono::nanoseconds d) {
    now_ += std::chrono::duration_cast<TimePoint::duration>(d);
  }
  void Set(TimePoint t) { now_ = t; }

  std::vector<std::chrono::milliseconds> slept;
  std::size_t sleep_budget = static_cast<std::size_t>(-1);
  std::vector<double> uniforms;  // empty: the seeded engine

 private:
  TimePoint now_ = TimePoint{} + std::chrono::hours(1000);
  std::size_t next_uniform_ = 0;
  std::mt19937_64 engine_{20261123};
};

}  // namespace tr::test_support
