// The simulated environment for tests: a clock that moves only when a test moves it or code
// sleeps on it (each sleep advances it at once, so backoffs and drains run in no real time), a
// record of every sleep, and randomness that is either scripted (each Uniform() takes the next
// of `uniforms`, cycling) or a fixed-seed engine. The one stand-in for tr::Env; tests that need
// a special sleep (one that blocks on a gate) derive from it.
//
// Timed waits (Env::Wait) block for real until their condition holds, the test stops them, or
// the simulated monotonic clock reaches their deadline: Advance() moves the clock and wakes every
// waiter, taking each waiter's own mutex to notify it, so a waiter between reading the clock and
// blocking cannot miss the move. Settle(n) then waits until n threads wait in this env on
// conditions that do not hold, each having looked again since the call, and still so when woken
// once more: the component has done what the change made due and is idle again.
// RunTimersUntil moves the clock from deadline to deadline until a condition holds. So a
// multi-threaded component (the work queue, the notifier's sender) runs its timers under the
// test's hand, and the test waits for it on events, not by polling real time.
//
// Thread-safe. Advance, Set, Settle and SleepFor must not be called holding a mutex that a
// waiter of this env waits with. `slept` and the configuration members are read and set while
// no other thread uses the env (before the component starts, after it stops). Copying copies the
// clock and the configuration, not the waiters.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <stop_token>
#include <vector>

#include "base/env.h"
#include "base/mutex.h"

namespace tr::test_support {

class SimulatedEnv : public Env {
 public:
  SimulatedEnv() = default;
  explicit SimulatedEnv(TimePoint start) : now_(start) {}
  SimulatedEnv(const SimulatedEnv& other)
      : slept(other.slept),
        sleep_budget(other.sleep_budget),
        uniforms(other.uniforms),
        now_(other.now_),
        monotonic_(other.monotonic_),
        next_uniform_(other.next_uniform_),
        engine_(other.engine_) {}
  SimulatedEnv& operator=(const SimulatedEnv&) = delete;

  TimePoint Now() override {
    MutexLock lock(sim_mu_);
    return now_;
  }
  Instant Monotonic() override {
    MutexLock lock(sim_mu_);
    return monotonic_;
  }
  // Advances the clock by `duration` and records it. False when `stop` is requested or the
  // sleep budget is spent (a loop that sleeps between rounds ends after `sleep_budget` rounds).
  bool SleepFor(std::chrono::nanoseconds duration, std::stop_token stop) override {
    std::size_t count = 0;
    {
      MutexLock lock(sim_mu_);
      slept.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(duration));
      count = slept.size();
    }
    Advance(duration);
    return !stop.stop_requested() && count < sleep_budget;
  }
  double Uniform() override {
    MutexLock lock(sim_mu_);
    if (!uniforms.empty()) return uniforms[next_uniform_++ % uniforms.size()];
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine_);
  }

  // The lock comes in held, through a reference the thread-safety analysis cannot follow, and
  // is let go and taken again below: the analysis is off here.
  bool Wait(std::condition_variable_any& cv, MutexLock& lock, std::stop_token stop,
            Instant deadline, absl::FunctionRef<bool()> ready) override
      ABSL_NO_THREAD_SAFETY_ANALYSIS {
    Waiter self{&cv, &lock.mutex(), deadline};
    {
      MutexLock sim(sim_mu_);
      waiters_.push_back(&self);
      ++comings_and_goings_;
    }
    // Read under the waiter's lock; a move of the clock or Settle clears `idle` and then
    // notifies under that lock, so the look that follows sets it again if still waiting.
    cv.wait(lock, stop, [&] {
      const bool done = ready() || Monotonic() >= deadline;
      MutexLock sim(sim_mu_);
      self.idle = !done;
      if (!done) changed_.notify_all();
      return done;
    });
    // Advance or Settle may be about to take this waiter's mutex: leave only when they are done
    // with it, with the mutex released meanwhile.
    lock.unlock();
    {
      MutexLock sim(sim_mu_);
      changed_.wait(sim, [&] { return self.busy == 0; });
      std::erase(waiters_, &self);
      ++comings_and_goings_;
      changed_.notify_all();
    }
    lock.lock();
    return ready();
  }

  // Moves both clocks by `d` and wakes every waiter to look again.
  void Advance(std::chrono::nanoseconds d) {
    {
      MutexLock lock(sim_mu_);
      now_ += std::chrono::duration_cast<TimePoint::duration>(d);
      monotonic_ += std::chrono::duration_cast<Instant::duration>(d);
    }
    WakeAll();
  }
  // Sets the wall clock (the monotonic one does not go back) and wakes every waiter.
  void Set(TimePoint t) {
    {
      MutexLock lock(sim_mu_);
      now_ = t;
    }
    WakeAll();
  }

  // Waits (in real time, at most `within` a round) until `threads` threads wait in this env on
  // conditions that do not hold, and stay so when woken once more: every waiter is woken and
  // looks again, and a round in which none of them came or went ends it (so a notification one
  // thread sent another just before waiting itself is seen). False when that did not happen in
  // time: the component is stuck elsewhere.
  bool Settle(std::size_t threads, std::chrono::milliseconds within = std::chrono::seconds(60)) {
    while (true) {
      if (!AllLooked(threads, within)) return false;
      std::uint64_t seen = 0;
      {
        MutexLock lock(sim_mu_);
        seen = comings_and_goings_;
      }
      if (!AllLooked(threads, within)) return false;
      MutexLock lock(sim_mu_);
      if (comings_and_goings_ == seen) return true;
    }
  }

  // Runs a component's timers until `done()` holds: settles its `threads` threads and, while
  // done() does not hold, moves the clock to the earliest deadline one of them waits for.
  // False when done() still does not hold and no thread waits with a deadline, a settle did
  // not come, or after `max_moves` moves. `done` is read with no lock of this env held.
  bool RunTimersUntil(std::size_t threads, const std::function<bool()>& done,
                      int max_moves = 10'000) {
    for (int moves = 0;; ++moves) {
      if (!Settle(threads)) return false;
      if (done()) return true;
      std::optional<Instant> next;
      {
        MutexLock lock(sim_mu_);
        for (const Waiter* w : waiters_) {
          if (w->deadline != kNoDeadline && (!next || w->deadline < *next)) next = w->deadline;
        }
        if (next && *next < monotonic_) next = monotonic_;
      }
      if (!next || moves == max_moves) return false;
      Advance(*next - Monotonic());
    }
  }

  std::vector<std::chrono::milliseconds> slept;
  std::size_t sleep_budget = static_cast<std::size_t>(-1);
  std::vector<double> uniforms;  // empty: the seeded engine

 private:
  struct Waiter {
    std::condition_variable_any* cv;
    Mutex* mu;
    Instant deadline;
    bool idle = false;  // looked, and its condition did not hold
    int busy = 0;       // Advance or Settle is notifying it
  };

  // Wakes every waiter and waits (at most `within`) until `threads` wait, each having looked
  // since.
  bool AllLooked(std::size_t threads, std::chrono::milliseconds within) {
    WakeAll();
    MutexLock lock(sim_mu_);
    return changed_.wait_for(lock, within, [&] {
      return waiters_.size() >= threads &&
             std::all_of(waiters_.begin(), waiters_.end(), [](Waiter* w) { return w->idle; });
    });
  }

  // Clears every waiter's `idle` and notifies each under its own mutex.
  void WakeAll() {
    std::vector<Waiter*> waiters;
    {
      MutexLock lock(sim_mu_);
      waiters = waiters_;
      for (Waiter* w : waiters) {
        w->idle = false;
        ++w->busy;
      }
    }
    for (Waiter* w : waiters) {
      w->mu->lock();
      w->cv->notify_all();
      w->mu->unlock();
    }
    MutexLock lock(sim_mu_);
    for (Waiter* w : waiters) --w->busy;
    changed_.notify_all();
  }

  Mutex sim_mu_;
  std::condition_variable_any changed_;  // a waiter came, looked or left; a wake ended
  std::vector<Waiter*> waiters_;
  std::uint64_t comings_and_goings_ = 0;  // waiters that came or left
  TimePoint now_ = TimePoint{} + std::chrono::hours(1000);
  Instant monotonic_ = Instant{} + std::chrono::hours(1000);
  std::size_t next_uniform_ = 0;
  std::mt19937_64 engine_{20261123};
};

}  // namespace tr::test_support
