// Counters and gauges the daemon exposes on /metrics in the Prometheus text format.
//
// Thread-safe (atomics).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace tr::reconciler {

struct Metrics {
  std::atomic<uint64_t> reconciles{0};
  std::atomic<uint64_t> reconcile_errors{0};
  std::atomic<uint64_t> polls{0};
  std::atomic<uint64_t> poll_errors{0};
  std::atomic<uint64_t> node_upgrades_started{0};
  std::atomic<uint64_t> node_upgrades_completed{0};
  std::atomic<uint64_t> node_upgrades_failed{0};
  std::atomic<uint64_t> status_commits{0};
  // Inbound webhooks (reconciler/forge/webhook_receiver.h).
  std::atomic<uint64_t> webhook_deliveries{0};
  std::atomic<uint64_t> webhook_accepted{0};
  std::atomic<uint64_t> webhook_ignored{0};
  std::atomic<uint64_t> webhook_duplicates{0};
  std::atomic<uint64_t> webhook_bad_signatures{0};
  std::atomic<uint64_t> webhook_too_large{0};
  std::atomic<uint64_t> webhook_queue_full{0};
  // Outbound notifications (reconciler/notify/webhook_notifier.h).
  std::atomic<uint64_t> notifications_sent{0};
  std::atomic<uint64_t> notification_failures{0};  // failed attempts that will be retried
  std::atomic<uint64_t> notifications_dropped{0};
  std::atomic<bool> ready{false};  // the first poll succeeded

  // Liveness: the last time the process made progress (a successful poll or a finished
  // reconcile). A process that makes none for a while is stuck and should be restarted.
  void MarkProgress(std::chrono::system_clock::time_point now);
  // True when progress was marked within `stuck_after` of `now`, or when `started` (the start
  // of the process) is that recent.
  bool Live(std::chrono::system_clock::time_point started,
            std::chrono::system_clock::time_point now, std::chrono::milliseconds stuck_after) const;

  // "# HELP ...\n# TYPE ...\ntalos_reconciler_... N\n" for every metric.
  std::string RenderPrometheus() const;

 private:
  std::atomic<int64_t> last_progress_ms_{0};  // since the epoch; 0 = never
};

}  // namespace tr::reconciler
