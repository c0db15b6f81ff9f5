// Sends format=discord deliveries to a Discord webhook (the URL holds its id and token):
// - a rollout's first delivery: executes the webhook with `wait=true`, so Discord answers with
//   the message, whose id is kept (MessageIds) before the delivery counts as sent;
// - its later deliveries: PATCH <webhook>/messages/<id>, editing that message;
// a message Discord no longer has (404) is forgotten and the content posted anew at once.
// Rate limits as Discord documents them: HTTP 429 waits its Retry-After (or the body's
// retry_after), and when X-RateLimit-Remaining says 0 the next request waits
// X-RateLimit-Reset-After.
//
// Thread-compatible.
#pragma once

#include "reconciler/features/notify/poster.h"

namespace tr::reconciler::notify {

class DiscordPoster final : public Poster {
 public:
  DiscordPoster(const NotifyTarget& target, const PostContext& context)
      : target_(target), context_(context) {}
  PostOutcome Post(const Spooled& s) override;

 private:
  const NotifyTarget& target_;
  const PostContext context_;
  Env::TimePoint next_request_{};  // not before (the bucket was empty)
};

}  // namespace tr::reconciler::notify
