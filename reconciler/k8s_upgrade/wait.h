// Polling with a deadline and a stop token, for the waits of a Kubernetes upgrade.
//
// Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tr::reconciler::k8s_upgrade {

// Calls `check` every `interval` until it returns true (OK), `timeout` passes
// (DeadlineExceeded) or `stop` is requested (Cancelled). A check that fails (an API that does not
// answer while a component restarts) is tried again; the last failure is in `*last_error`.
inline absl::Status PollUntil(std::stop_token stop, std::chrono::milliseconds interval,
                              std::chrono::milliseconds timeout,
                              const std::function<absl::StatusOr<bool>()>& check,
                              std::string* last_error) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::mutex mu;
  std::condition_variable_any cv;
  while (true) {
    absl::StatusOr<bool> done = check();
    if (done.ok() && *done) return absl::OkStatus();
    if (!done.ok()) *last_error = std::string(done.status().message());
    if (stop.stop_requested()) return absl::CancelledError("stopped");
    if (std::chrono::steady_clock::now() >= deadline) return absl::DeadlineExceededError("timeout");
    std::unique_lock lock(mu);
    cv.wait_for(lock, stop, interval, [] { return false; });
  }
}

}  // namespace tr::reconciler::k8s_upgrade
