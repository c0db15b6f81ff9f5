#include "reconciler/clients/forge/webhook_event.h"

namespace tr::reconciler::forge {

const char* PullRequestActionName(PullRequestAction action) {
  switch (action) {
    case PullRequestAction::kOpened:
      return "opened";
    case PullRequestAction::kUpdated:
      return "updated";
    case PullRequestAction::kReopened:
      return "reopened";
    case PullRequestAction::kClosed:
      return "closed";
    case PullRequestAction::kMerged:
      return "merged";
    case PullRequestAction::kOther:
      return "other";
  }
  return "other";
}

}  // namespace tr::reconciler::forge
