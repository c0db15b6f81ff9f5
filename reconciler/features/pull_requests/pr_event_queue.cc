#include "reconciler/features/pull_requests/pr_event_queue.h"

#include <algorithm>
#include <utility>

namespace tr::reconciler::pull_requests {

bool AsksForPlan(const forge::WebhookEvent& event) {
  return event.action != forge::PullRequestAction::kClosed &&
         event.action != forge::PullRequestAction::kMerged;
}

void PullRequestEventQueue::Push(const forge::WebhookEvent& event) {
  if (AsksForPlan(event)) {
    std::erase_if(events_, [&](const forge::WebhookEvent& waiting) {
      return waiting.number == event.number && AsksForPlan(waiting);
    });
  }
  if (events_.size() >= capacity_) {
    auto plan = std::find_if(events_.begin(), events_.end(), AsksForPlan);
    events_.erase(plan != events_.end() ? plan : events_.begin());
  }
  events_.push_back(event);
}

std::deque<forge::WebhookEvent> PullRequestEventQueue::TakeAll() {
  return std::exchange(events_, {});
}

}  // namespace tr::reconciler::pull_requests
