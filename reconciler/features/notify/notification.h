// Outbound notifications: what happened to a cluster's rollout, worked out from two recorded
// statuses. How one is written for a receiver is a MessageFormat (message_format.h).
//
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace tr::reconciler::notify {

enum class NotificationEvent {
  kRolloutStarted,
  kNodeUpgraded,
  kRolloutCompleted,
  kRolloutFailed,
  kRolloutBlocked,
  kWaitingForGate,
};
// "rollout.started", "node.upgraded", "rollout.completed", "rollout.failed",
// "rollout.blocked", "rollout.waiting-for-gate".
const char* NotificationEventName(NotificationEvent event);

struct Notification {
  NotificationEvent event = NotificationEvent::kRolloutStarted;
  std::string cluster;
  std::string phase;    // "UpgradingTalos", ...
  std::string message;  // the status message, or the node's last operation
  std::string node;     // kNodeUpgraded only
  std::string talos_current, talos_target;
  std::string kubernetes_current, kubernetes_target;
  std::string progress;  // "2/5"
  std::string commit;    // the desired commit being rolled out
  // The cluster's metadata.labels as its status records them: what notifications are filtered by.
  std::map<std::string, std::string> labels;
  core::TimePoint at;
};

// What changed from `previous` (null for a cluster never recorded) to `next`: entering an
// upgrading phase starts a rollout; a node's new last operation is a node upgraded; leaving an
// upgrading phase for Ready completes it; entering UpgradeFailed, Blocked or WaitingForGate is
// reported once, on entry.
std::vector<Notification> NotificationsBetween(const core::ClusterStatus* previous,
                                               const core::ClusterStatus& next);

}  // namespace tr::reconciler::notify
