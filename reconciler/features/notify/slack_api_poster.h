// Sends format=slack-bot deliveries through Slack's Web API with the bot token:
// - a rollout's first delivery: chat.postMessage to the channel; the answer's `ts` is kept
//   (MessageIds) before the delivery counts as sent;
// - its later deliveries: chat.update of that `ts`, so the rollout stays one message;
// - replies (threads=nodes): chat.postMessage with thread_ts, the rollout's message.
// Slack answers HTTP 200 with {"ok": false, "error": ...} for a refused call: a failed attempt,
// except that a message Slack no longer has or lets us edit (message_not_found,
// cant_update_message, edit_window_closed) is forgotten and the content posted anew at once.
// Rate limits as Slack documents them: HTTP 429 waits its Retry-After, and messages are posted
// at most one per second (Slack's limit for chat.postMessage in one channel).
// The token goes only in the Authorization header; it is never logged.
//
// Thread-compatible.
#pragma once

#include "reconciler/features/notify/poster.h"

namespace tr::reconciler::notify {

class SlackApiPoster final : public Poster {
 public:
  SlackApiPoster(const NotifyTarget& target, const PostContext& context)
      : target_(target), context_(context) {}
  PostOutcome Post(const Spooled& s) override;

 private:
  const NotifyTarget& target_;
  const PostContext context_;
  Env::TimePoint next_post_{};  // chat.postMessage not before
};

}  // namespace tr::reconciler::notify
