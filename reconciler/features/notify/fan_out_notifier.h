// Sends each notification to every configured sink, in turn. The sinks are independent: each
// keeps its own spool, retries and order (a WebhookNotifier per receiver), so a receiver that
// is down delays only its own deliveries, which it sends once it is back, and the others are
// sent as usual. With no sink, notifications are dropped.
//
// Thread-safe (the sinks are).
#pragma once

#include <memory>
#include <vector>

#include "reconciler/features/notify/notifier.h"

namespace tr::reconciler::notify {

class FanOutNotifier final : public Notifier {
 public:
  explicit FanOutNotifier(std::vector<std::unique_ptr<Notifier>> sinks)
      : sinks_(std::move(sinks)) {}

  // Hands `notification` to every sink; a sink that throws is logged and the rest still get it.
  void Notify(const Notification& notification) override;

  size_t sinks() const { return sinks_.size(); }

 private:
  const std::vector<std::unique_ptr<Notifier>> sinks_;
};

}  // namespace tr::reconciler::notify
