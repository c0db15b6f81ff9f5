#include "reconciler/notify/rollout_text.h"

namespace tr::reconciler::notify {
namespace {

std::string Component(const std::string& name, const std::string& current,
                      const std::string& target) {
  if (target.empty() || target == current) return current.empty() ? "" : name + " " + current;
  return name + " " + (current.empty() ? "?" : current) + " → " + target;
}

}  // namespace

std::string VersionsLine(const Notification& n) {
  const std::string talos = Component("Talos", n.talos_current, n.talos_target);
  const std::string kubernetes =
      Component("Kubernetes", n.kubernetes_current, n.kubernetes_target);
  if (talos.empty() || kubernetes.empty()) return talos + kubernetes;
  return talos + ", " + kubernetes;
}

std::string StateLine(const Notification& n) {
  switch (n.event) {
    case NotificationEvent::kRolloutStarted:
    case NotificationEvent::kNodeUpgraded:
      return n.progress.empty() ? "in progress" : "in progress (" + n.progress + " nodes)";
    case NotificationEvent::kRolloutCompleted:
      return "completed";
    case NotificationEvent::kRolloutFailed:
      return "failed";
    case NotificationEvent::kRolloutBlocked:
      return "blocked";
    case NotificationEvent::kWaitingForGate:
      return "waiting for a health gate";
  }
  return "unknown";
}

uint32_t StateColor(NotificationEvent event) {
  switch (event) {
    case NotificationEvent::kRolloutCompleted:
      return 0x2e7d32;
    case NotificationEvent::kRolloutFailed:
      return 0xc62828;
    case NotificationEvent::kRolloutBlocked:
    case NotificationEvent::kWaitingForGate:
      return 0xf9a825;
    default:
      return 0x1565c0;
  }
}

std::string ShortCommit(const std::string& commit) { return commit.substr(0, 12); }

}  // namespace tr::reconciler::notify
