// Polling with a deadline and a stop token, for the waits of a Kubernetes upgrade. Time and the
// pause between checks come from the env the upgrade was given (the real one in the daemon and
// the command: the checks are real API calls).
//
// Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <functional>
#include <stop_token>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/env.h"

namespace tr::reconciler::k8s_upgrade {

// Calls `check` every `interval` until it returns true (OK), `timeout` passes
// (DeadlineExceeded) or `stop` is requested (Cancelled). A check that fails (an API that does not
// answer while a component restarts) is tried again; the last failure is in `*last_error`.
inline absl::Status PollUntil(Env& env, std::stop_token stop, std::chrono::milliseconds interval,
                              std::chrono::milliseconds timeout,
                              const std::function<absl::StatusOr<bool>()>& check,
                              std::string* last_error) {
  const Env::Instant deadline = env.Monotonic() + timeout;
  while (true) {
    absl::StatusOr<bool> done = check();
    if (done.ok() && *done) return absl::OkStatus();
    if (!done.ok()) *last_error = std::string(done.status().message());
    if (stop.stop_requested()) return absl::CancelledError("stopped");
    if (env.Monotonic() >= deadline) return absl::DeadlineExceededError("timeout");
    (void)env.SleepFor(interval, stop);  // a stop is seen at the top of the loop
  }
}

}  // namespace tr::reconciler::k8s_upgrade
