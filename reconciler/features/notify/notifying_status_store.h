// A StatusStore that tells a Notifier what changed: after each status is recorded durably,
// the difference from the cluster's previous record (NotificationsBetween) is handed to the
// notifier, which only spools it. Recording never waits on a receiver.
//
// Thread-safe.
#pragma once

#include <map>
#include <mutex>

#include "base/mutex.h"
#include "reconciler/features/notify/notifier.h"
#include "reconciler/loop/status_store.h"

namespace tr::reconciler::notify {

class NotifyingStatusStore final : public StatusStore {
 public:
  // `inner` and `notifier` must outlive this store.
  NotifyingStatusStore(StatusStore& inner, Notifier& notifier)
      : inner_(inner), notifier_(notifier) {}

  // The inner store's statuses; remembered as the baseline of the first record.
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(std::stop_token stop) override;
  // Records through the inner store; notifies only when that succeeded.
  absl::Status Record(const core::ClusterStatus& status, std::stop_token stop) override;
  // As Record, once the inner store has taken it (a news-only status: see StatusStore).
  absl::Status RecordSoon(const core::ClusterStatus& status, std::stop_token stop) override;

 private:
  absl::Status NotifyAfter(absl::Status recorded, const core::ClusterStatus& status);

  StatusStore& inner_;
  Notifier& notifier_;
  Mutex mu_;
  std::map<std::string, core::ClusterStatus> last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler::notify
