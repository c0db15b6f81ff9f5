#include "reconciler/features/webhooks/webhook_queue.h"

#include <algorithm>

namespace tr::reconciler::webhooks {

using forge::WebhookEvent;

bool WebhookQueue::TryPush(WebhookEvent event) {
  {
    MutexLock lock(mu_);
    if (events_.size() >= capacity_) return false;
    events_.push_back(std::move(event));
  }
  cv_.notify_one();
  return true;
}

std::optional<WebhookEvent> WebhookQueue::Pop(std::stop_token stop) {
  MutexLock lock(mu_);
  if (!cv_.wait(lock, stop,
                [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !events_.empty(); }))
    return std::nullopt;
  WebhookEvent event = std::move(events_.front());
  events_.pop_front();
  return event;
}

size_t WebhookQueue::Size() {
  MutexLock lock(mu_);
  return events_.size();
}

bool DeliveryMemory::Remember(const std::string& id) {
  MutexLock lock(mu_);
  if (!ids_.insert(id).second) return false;
  order_.push_back(id);
  while (order_.size() > capacity_) {
    ids_.erase(order_.front());
    order_.pop_front();
  }
  return true;
}

bool DeliveryMemory::Seen(const std::string& id) {
  MutexLock lock(mu_);
  return ids_.contains(id);
}

void DeliveryMemory::Forget(const std::string& id) {
  MutexLock lock(mu_);
  if (ids_.erase(id) == 0) return;
  order_.erase(std::find(order_.begin(), order_.end(), id));
}

}  // namespace tr::reconciler::webhooks
