#include "reconciler/features/notify/notifying_status_store.h"

namespace tr::reconciler::notify {

absl::StatusOr<std::map<std::string, core::ClusterStatus>> NotifyingStatusStore::LoadAll(
    std::stop_token stop) {
  auto statuses = inner_.LoadAll(stop);
  if (statuses.ok()) {
    MutexLock lock(mu_);
    last_ = *statuses;
  }
  return statuses;
}

absl::Status NotifyingStatusStore::Record(const core::ClusterStatus& status,
                                          std::stop_token stop) {
  return NotifyAfter(inner_.Record(status, stop), status);
}

absl::Status NotifyingStatusStore::RecordSoon(const core::ClusterStatus& status,
                                              std::stop_token stop) {
  return NotifyAfter(inner_.RecordSoon(status, stop), status);
}

absl::Status NotifyingStatusStore::NotifyAfter(absl::Status recorded,
                                               const core::ClusterStatus& status) {
  if (!recorded.ok()) return recorded;
  std::vector<Notification> notifications;
  {
    MutexLock lock(mu_);
    auto it = last_.find(status.cluster);
    notifications = NotificationsBetween(it == last_.end() ? nullptr : &it->second, status);
    last_[status.cluster] = status;
  }
  for (const Notification& n : notifications) notifier_.Notify(n);
  return recorded;
}

}  // namespace tr::reconciler::notify
