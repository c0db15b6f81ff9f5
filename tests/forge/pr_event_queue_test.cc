// The pull-request flow's queue under a flood: one plan waits per pull request, its newest, and
// closes and merges are neither coalesced nor pushed out by plans.
#include "reconciler/features/pull_requests/pr_event_queue.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tr::reconciler::pull_requests {
namespace {

using forge::PullRequestAction;
using forge::WebhookEvent;

WebhookEvent Event(int64_t number, PullRequestAction action, const std::string& head) {
  WebhookEvent event;
  event.kind = forge::WebhookKind::kPullRequest;
  event.number = number;
  event.action = action;
  event.head_sha = head;
  return event;
}

// "<number>:<action>:<head>" of each event, in order.
std::vector<std::string> Names(const std::deque<WebhookEvent>& events) {
  std::vector<std::string> names;
  for (const WebhookEvent& e : events) {
    names.push_back(std::to_string(e.number) + ":" + forge::PullRequestActionName(e.action) + ":" +
                    e.head_sha);
  }
  return names;
}

TEST(PullRequestEventQueueTest, AFloodOfPushesToOnePullRequestQueuesOnePlanOfItsNewestHead) {
  PullRequestEventQueue queue(256);
  queue.Push(Event(8, PullRequestAction::kOpened, "a8"));
  for (int i = 0; i < 1000; ++i) {
    queue.Push(Event(7, PullRequestAction::kUpdated, "h" + std::to_string(i)));
  }
  queue.Push(Event(8, PullRequestAction::kMerged, "a8"));
  EXPECT_EQ(Names(queue.TakeAll()),
            (std::vector<std::string>{"8:opened:a8", "7:updated:h999", "8:merged:a8"}));
  EXPECT_TRUE(queue.empty());
}

TEST(PullRequestEventQueueTest, APlanAfterACloseIsKeptAfterIt) {
  PullRequestEventQueue queue(256);
  queue.Push(Event(7, PullRequestAction::kUpdated, "a"));
  queue.Push(Event(7, PullRequestAction::kClosed, "a"));
  queue.Push(Event(7, PullRequestAction::kReopened, "b"));
  EXPECT_EQ(Names(queue.TakeAll()), (std::vector<std::string>{"7:closed:a", "7:reopened:b"}));
}

TEST(PullRequestEventQueueTest, AFullQueueDropsAWaitingPlanBeforeAMerge) {
  PullRequestEventQueue queue(3);
  queue.Push(Event(1, PullRequestAction::kMerged, "m1"));
  queue.Push(Event(2, PullRequestAction::kOpened, "p2"));
  queue.Push(Event(3, PullRequestAction::kMerged, "m3"));
  queue.Push(Event(4, PullRequestAction::kOpened, "p4"));  // full: the plan of 2 goes
  EXPECT_EQ(Names(queue.TakeAll()),
            (std::vector<std::string>{"1:merged:m1", "3:merged:m3", "4:opened:p4"}));
  queue.Push(Event(1, PullRequestAction::kMerged, "m1"));
  queue.Push(Event(2, PullRequestAction::kClosed, "c2"));
  queue.Push(Event(3, PullRequestAction::kMerged, "m3"));
  queue.Push(Event(4, PullRequestAction::kMerged, "m4"));  // no plan waits: the oldest goes
  EXPECT_EQ(Names(queue.TakeAll()),
            (std::vector<std::string>{"2:closed:c2", "3:merged:m3", "4:merged:m4"}));
}

}  // namespace
}  // namespace tr::reconciler::pull_requests
