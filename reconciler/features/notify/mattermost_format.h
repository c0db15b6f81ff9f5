// A Mattermost incoming-webhook body (format=mattermost): posted as "talos-reconciler" with
// one message attachment (Mattermost's Slack-compatible kind) whose edge is coloured by
// severity, titled with cluster and event, holding the message and the facts
// (chat_message.h) as short fields, and the summary in plain text as the fallback (what
// notifications show). The hook's URL is the credential, so it takes no secret.
//
// Thread-safe.
#pragma once

#include "reconciler/features/notify/message_format.h"

namespace tr::reconciler::notify {

class MattermostFormat final : public MessageFormat {
 public:
  std::string_view Name() const override { return "mattermost"; }
  bool NeedsSecret() const override { return false; }
  std::string Render(const Notification& n, const std::string& delivery_id) const override;
};

}  // namespace tr::reconciler::notify
