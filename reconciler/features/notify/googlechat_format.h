// A Google Chat incoming-webhook body (format=googlechat): the one-line summary as text and a
// card (cardsV2) with the title, the message and the facts (chat_message.h). Every message of
// one rollout (cluster, commit, Talos and Kubernetes targets) carries the same thread key, and
// the request asks Chat to reply into that thread (messageReplyOption in the URL's query), so a
// rollout reads as one thread. The webhook's URL is the credential, so it takes no secret.
//
// Thread-safe.
#pragma once

#include "reconciler/features/notify/message_format.h"

namespace tr::reconciler::notify {

class GoogleChatFormat final : public MessageFormat {
 public:
  std::string_view Name() const override { return "googlechat"; }
  bool NeedsSecret() const override { return false; }
  std::string Render(const Notification& n, const std::string& delivery_id) const override;
  // `configured_path` with messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD added to
  // its query (unless it has a messageReplyOption already): without it, Chat ignores the
  // thread key and starts a thread per message.
  std::string Path(const std::string& configured_path) const override;
};

// The thread key of `n`'s rollout: "talos-reconciler/<cluster>/<commit>/talos-<target>/
// kubernetes-<target>", the same for every notification of one rollout.
std::string RolloutThreadKey(const Notification& n);

}  // namespace tr::reconciler::notify
