#include "reconciler/metrics.h"

#include <algorithm>

#include "fmt/format.h"

namespace tr::reconciler {
namespace {

void Counter(std::string& out, const char* name, const char* help, uint64_t value) {
  out += fmt::format(
      "# HELP talos_reconciler_{0} {1}\n# TYPE talos_reconciler_{0} counter\n"
      "talos_reconciler_{0} {2}\n",
      name, help, value);
}

}  // namespace

void Metrics::MarkProgress(std::chrono::system_clock::time_point now) {
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  int64_t seen = last_progress_ms_.load();
  while (seen < ms && !last_progress_ms_.compare_exchange_weak(seen, ms)) {
  }
}

bool Metrics::Live(std::chrono::system_clock::time_point started,
                   std::chrono::system_clock::time_point now,
                   std::chrono::milliseconds stuck_after) const {
  const auto last = std::max(started, std::chrono::system_clock::time_point(
                                          std::chrono::milliseconds(last_progress_ms_.load())));
  return now - last <= stuck_after;
}

std::string Metrics::RenderPrometheus() const {
  std::string out;
  Counter(out, "reconciles_total", "Cluster reconciles run.", reconciles);
  Counter(out, "reconcile_errors_total", "Reconciles that ended in an error.", reconcile_errors);
  Counter(out, "polls_total", "Polls of the profile repository.", polls);
  Counter(out, "poll_errors_total", "Polls that failed.", poll_errors);
  Counter(out, "node_upgrades_started_total", "Node upgrades started.", node_upgrades_started);
  Counter(out, "node_upgrades_completed_total", "Node upgrades verified healthy.",
          node_upgrades_completed);
  Counter(out, "node_upgrades_failed_total", "Node upgrades that failed.", node_upgrades_failed);
  Counter(out, "status_commits_total", "Status records pushed.", status_commits);
  Counter(out, "webhook_deliveries_total", "Webhook requests received.", webhook_deliveries);
  Counter(out, "webhook_accepted_total", "Webhook deliveries queued.", webhook_accepted);
  Counter(out, "webhook_ignored_total", "Verified deliveries not acted on.", webhook_ignored);
  Counter(out, "webhook_duplicates_total", "Replayed delivery ids.", webhook_duplicates);
  Counter(out, "webhook_bad_signatures_total", "Deliveries with a missing or wrong signature.",
          webhook_bad_signatures);
  Counter(out, "webhook_too_large_total", "Deliveries over the size cap.", webhook_too_large);
  Counter(out, "webhook_queue_full_total", "Deliveries refused with 503.", webhook_queue_full);
  Counter(out, "notifications_sent_total", "Notifications a receiver accepted.",
          notifications_sent);
  Counter(out, "notification_failures_total", "Notification attempts to be retried.",
          notification_failures);
  Counter(out, "notifications_dropped_total", "Notifications given up on.", notifications_dropped);
  out += fmt::format(
      "# HELP talos_reconciler_ready Whether the first poll succeeded.\n"
      "# TYPE talos_reconciler_ready gauge\ntalos_reconciler_ready {}\n",
      ready ? 1 : 0);
  return out;
}

}  // namespace tr::reconciler
