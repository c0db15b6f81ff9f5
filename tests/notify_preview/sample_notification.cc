#include "tests/notify_preview/sample_notification.h"

#include "core/timestamp.h"

namespace tr::notify_preview {

using reconciler::notify::Notification;
using reconciler::notify::NotificationEvent;

Notification SampleNotification() {
  Notification n;
  n.event = NotificationEvent::kNodeUpgraded;
  n.cluster = "prod-eu-1";
  n.phase = "UpgradingTalos";
  n.node = "w-0";
  n.message = "upgraded to Talos 1.12.0 in 6m12s";
  n.talos_current = "1.11.6";
  n.talos_target = "1.12.0";
  n.kubernetes_current = "1.35.0";
  n.kubernetes_target = "1.35.0";
  n.progress = "2/5";
  n.commit = "9a1c7e2f64b0d5c3a8e1f7b2d9c4a6e0f3b5d8c1";
  n.at = core::ParseTimestamp("2026-11-22T04:07:13Z").value();
  return n;
}

std::vector<Notification> SampleRollout() {
  struct Event {
    NotificationEvent event;
    const char* phase;
    const char* message;
  };
  std::vector<Notification> all;
  for (const Event& e : std::initializer_list<Event>{
           {NotificationEvent::kRolloutStarted, "UpgradingTalos", ""},
           {NotificationEvent::kNodeUpgraded, "UpgradingTalos", ""},
           {NotificationEvent::kRolloutCompleted, "Ready", "Talos 1.12.0 on 5 of 5 nodes"},
           {NotificationEvent::kRolloutFailed, "UpgradeFailed", "w-3: not Ready after 10m"},
           {NotificationEvent::kRolloutBlocked, "Blocked", "etcd has 2 of 3 members healthy"},
           {NotificationEvent::kWaitingForGate, "WaitingForGate", "waiting for gate prod-approval"},
       }) {
    Notification n = SampleNotification();
    n.event = e.event;
    n.phase = e.phase;
    if (e.event != NotificationEvent::kNodeUpgraded) {
      n.node.clear();
      n.message = e.message;
    }
    all.push_back(std::move(n));
  }
  return all;
}

}  // namespace tr::notify_preview
