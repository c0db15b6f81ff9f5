// Who hears about rollouts: the interface every notification sink implements, and that the
// status store (NotifyingStatusStore) calls after each recorded change. A sink takes the
// notification and returns at once; it never fails or blocks its caller (a rollout): what it
// cannot deliver now it keeps and sends later, or drops and says so in its log and metrics.
//
// Implementations are thread-safe.
#pragma once

#include "reconciler/features/notify/notification.h"

namespace tr::reconciler::notify {

class Notifier {
 public:
  virtual ~Notifier() = default;
  virtual void Notify(const Notification& notification) = 0;
};

}  // namespace tr::reconciler::notify
