// The pull-request events waiting for the flow's worker, bounded and coalesced. A pull request
// needs one plan, of its newest head: a new event that plans it replaces the one still waiting,
// so a flood of pushes to one pull request queues one plan, not one per push. Closes and merges
// are never coalesced (a merge starts the rollout report) and, when the queue is full, a
// waiting plan is dropped before any of them.
//
// Thread-compatible: the flow holds its lock around it.
#pragma once

#include <cstddef>
#include <deque>

#include "reconciler/clients/forge/webhook_event.h"

namespace tr::reconciler::pull_requests {

class PullRequestEventQueue {
 public:
  explicit PullRequestEventQueue(std::size_t capacity) : capacity_(capacity) {}

  void Push(const forge::WebhookEvent& event);
  // Every waiting event, in order; the queue is then empty.
  std::deque<forge::WebhookEvent> TakeAll();
  bool empty() const { return events_.empty(); }
  std::size_t size() const { return events_.size(); }

 private:
  const std::size_t capacity_;
  std::deque<forge::WebhookEvent> events_;
};

// Whether `event` asks for a plan (anything but a close or a merge).
bool AsksForPlan(const forge::WebhookEvent& event);

}  // namespace tr::reconciler::pull_requests
