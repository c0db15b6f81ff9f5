#include "reconciler/features/notify/fan_out_notifier.h"

#include <exception>

#include "reconciler/runtime/logging.h"

namespace tr::reconciler::notify {

void FanOutNotifier::Notify(const Notification& notification) {
  for (size_t i = 0; i < sinks_.size(); ++i) {
    // A sink must not throw; if one does anyway (out of memory), the others are still told.
    try {
      sinks_[i]->Notify(notification);
    } catch (const std::exception& e) {
      ModuleLogger("notify")->error("step=fan-out sink={} event={} error={}", i,
                                    NotificationEventName(notification.event), LogValue(e.what()));
    }
  }
}

}  // namespace tr::reconciler::notify
