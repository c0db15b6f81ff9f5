// How a long-running command stops on SIGTERM or SIGINT (the daemon, upgrade-k8s): the first
// signal becomes a stop request that everything running watches; a second one, or `grace`
// after the first when given, exits the process at once with `exit_code`. Leaving that way is
// safe: every step is recorded before its call, as for a kill -9.
//
// The constructor blocks both signals in the calling thread and every thread it starts
// afterwards: create it before any other thread. One per process; not copyable.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <thread>

#include "base/env.h"

namespace tr {

// Why the process exits at once.
enum class ForcedExit { kSecondSignal, kGraceOver };

struct SignalStopOptions {
  int exit_code = 2;                          // at a second signal, or past `grace`
  std::optional<std::chrono::seconds> grace;  // none: only a second signal exits
  std::function<void()> on_stop;              // at the first signal (say so in the log)
  std::function<void(ForcedExit)> on_exit;    // just before exiting at once
};

class SignalStop {
 public:
  // `env` measures the grace (the real one: signals come in real time).
  SignalStop(SignalStopOptions options, Env& env);
  ~SignalStop();
  SignalStop(const SignalStop&) = delete;
  SignalStop& operator=(const SignalStop&) = delete;

  std::stop_token token() const { return stop_.get_token(); }

 private:
  const SignalStopOptions options_;
  std::stop_source stop_;
  const int wake_;        // an eventfd: the destructor wakes the watcher through it
  std::jthread watcher_;  // last: started once the rest exists
};

}  // namespace tr
