// A Microsoft Teams body (format=teams) for a Teams Workflows webhook (the "When a Teams
// webhook request is received" trigger posting to a channel): a message with one Adaptive Card
// attachment, version 1.4 (Teams renders up to 1.5), whose header band is coloured by severity
// and which lists the facts (chat_message.h) and the message. The Workflow's URL is the
// credential (it carries its own signature parameter), so it takes no secret.
//
// Thread-safe.
#pragma once

#include "reconciler/features/notify/message_format.h"

namespace tr::reconciler::notify {

class TeamsFormat final : public MessageFormat {
 public:
  std::string_view Name() const override { return "teams"; }
  bool NeedsSecret() const override { return false; }
  std::string Render(const Notification& n, const std::string& delivery_id) const override;
};

}  // namespace tr::reconciler::notify
