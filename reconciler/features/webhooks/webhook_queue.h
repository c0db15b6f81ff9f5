// Where the webhook receiver hands over verified deliveries: a bounded queue (a full queue
// makes the receiver answer 503 so the sender retries later, instead of growing without
// bound), and the memory of delivery ids already taken, so a redelivery is acted on once.
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>

#include "base/mutex.h"
#include "reconciler/clients/forge/webhook_event.h"

namespace tr::reconciler::webhooks {

class WebhookQueue {
 public:
  explicit WebhookQueue(size_t capacity) : capacity_(capacity) {}

  // Adds `event` unless the queue holds `capacity` events already; returns whether it did.
  bool TryPush(forge::WebhookEvent event);
  // The oldest event; waits for one. nullopt once `stop` is requested.
  std::optional<forge::WebhookEvent> Pop(std::stop_token stop);
  size_t Size();

 private:
  const size_t capacity_;
  Mutex mu_;
  std::condition_variable_any cv_;
  std::deque<forge::WebhookEvent> events_ ABSL_GUARDED_BY(mu_);
};

// The last `capacity` deliveries taken, each by a key of fixed size (the digest of its body;
// oldest forgotten first).
class DeliveryMemory {
 public:
  explicit DeliveryMemory(size_t capacity) : capacity_(capacity) {}

  // Records `id`; returns false when it was already recorded (a replay).
  bool Remember(const std::string& id);
  // Whether `id` is recorded.
  bool Seen(const std::string& id);
  // Drops `id` again, for a delivery that was refused after Remember (queue full): the
  // sender's retry must then be taken.
  void Forget(const std::string& id);

 private:
  const size_t capacity_;
  Mutex mu_;
  std::set<std::string> ids_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler::webhooks
