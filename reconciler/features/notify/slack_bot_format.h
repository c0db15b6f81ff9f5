// Slack through a bot token (format=slack-bot): one message per rollout, posted with
// chat.postMessage and then updated in place with chat.update, so a channel shows where each
// rollout stands instead of a burst of messages. The body is the message's content, `text`
// (what notifications and screen readers show) and Block Kit `blocks`; the sender adds the
// channel, and the `ts` of the message it updates (slack_api_poster.h). With threads=nodes,
// each node upgraded is also a reply in the message's thread, written as format=slack writes
// it (RenderReply).
//
// Thread-safe.
#pragma once

#include "reconciler/features/notify/message_format.h"

namespace tr::reconciler::notify {

class SlackBotFormat final : public MessageFormat {
 public:
  std::string_view Name() const override { return "slack-bot"; }
  bool NeedsSecret() const override { return false; }
  Transport Via() const override { return Transport::kSlackApi; }
  std::string Render(const Notification& n, const std::string& delivery_id) const override;
  // A node's reply in the rollout's thread: {"text": "<one line>"}.
  static std::string RenderReply(const Notification& n);
};

// Text safe in Slack's mrkdwn: &, < and > escaped, as Slack asks of message text, and no
// mention (core/inert_text.h InertAngleMarkup).
std::string SlackEscape(const std::string& text);

}  // namespace tr::reconciler::notify
