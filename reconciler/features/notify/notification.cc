#include "reconciler/features/notify/notification.h"


namespace tr::reconciler::notify {
namespace {

bool Upgrading(const std::string& phase) {
  return phase == "UpgradingTalos" || phase == "UpgradingKubernetes";
}

Notification About(NotificationEvent event, const core::ClusterStatus& s) {
  Notification n;
  n.event = event;
  n.cluster = s.cluster;
  n.phase = core::ClusterPhaseName(s.phase);
  n.message = s.message;
  n.talos_current = s.talos.current;
  n.talos_target = s.talos.target;
  n.kubernetes_current = s.kubernetes.current;
  n.kubernetes_target = s.kubernetes.target;
  n.progress = s.phase == core::ClusterPhase::kUpgradingKubernetes ? s.kubernetes.progress
                                                                   : s.talos.progress;
  n.commit = s.desired_commit_attempted;
  n.labels = s.labels;
  n.at = s.updated;
  return n;
}

// Nodes whose last operation is new since `previous`.
void AddNodeUpgrades(const core::ClusterStatus* previous, const core::ClusterStatus& next,
                     std::vector<Notification>& out) {
  for (const core::NodeStatus& node : next.nodes) {
    if (node.last_operation.empty()) continue;
    bool seen = false;
    if (previous != nullptr) {
      for (const core::NodeStatus& before : previous->nodes) {
        if (before.name == node.name) seen = before.last_operation == node.last_operation;
      }
    }
    if (seen) continue;
    Notification n = About(NotificationEvent::kNodeUpgraded, next);
    n.node = node.name;
    n.message = node.last_operation;
    out.push_back(std::move(n));
  }
}

}  // namespace

const char* NotificationEventName(NotificationEvent event) {
  switch (event) {
    case NotificationEvent::kRolloutStarted:
      return "rollout.started";
    case NotificationEvent::kNodeUpgraded:
      return "node.upgraded";
    case NotificationEvent::kRolloutCompleted:
      return "rollout.completed";
    case NotificationEvent::kRolloutFailed:
      return "rollout.failed";
    case NotificationEvent::kRolloutBlocked:
      return "rollout.blocked";
    case NotificationEvent::kWaitingForGate:
      return "rollout.waiting-for-gate";
  }
  return "unknown";
}

std::vector<Notification> NotificationsBetween(const core::ClusterStatus* previous,
                                               const core::ClusterStatus& next) {
  const std::string before = previous ? core::ClusterPhaseName(previous->phase) : "Ready";
  const std::string after = core::ClusterPhaseName(next.phase);
  std::vector<Notification> out;
  if (Upgrading(after) && before != after) {
    out.push_back(About(NotificationEvent::kRolloutStarted, next));
  }
  AddNodeUpgrades(previous, next, out);
  if (before == after) return out;
  if (after == "Ready" && Upgrading(before)) {
    out.push_back(About(NotificationEvent::kRolloutCompleted, next));
  } else if (after == "UpgradeFailed") {
    out.push_back(About(NotificationEvent::kRolloutFailed, next));
  } else if (after == "Blocked") {
    out.push_back(About(NotificationEvent::kRolloutBlocked, next));
  } else if (after == "WaitingForGate") {
    out.push_back(About(NotificationEvent::kWaitingForGate, next));
  }
  return out;
}

}  // namespace tr::reconciler::notify
