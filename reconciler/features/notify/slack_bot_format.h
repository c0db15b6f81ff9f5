// Slack through a bot token (format=slack-bot): one message per rollout, posted with
// chat.postMessage and then updated in place with chat.update, so a channel shows where each
// rollout stands instead of a burst of messages. The body is the message's content, `text`
// (what notifications and screen readers show) and Block Kit `blocks`; the sender adds the
// channel, and the `ts` of the message it updates (slack_api_poster.h). With threads=nodes,
// each node upgraded is also a reply in the message's thread, written as format=slack writes
// it (RenderReply). Its keys: token-file= (the bot token), channel= (the channel's id) and
// threads=nodes; its URL defaults to Slack's Web API, where its poster calls
// (slack_api_poster.h).
//
// Thread-safe.
#pragma once

#include "reconciler/features/notify/message_format.h"

namespace tr::reconciler::notify {

class SlackBotFormat final : public MessageFormat {
 public:
  std::string_view Name() const override { return "slack-bot"; }
  bool NeedsSecret() const override { return false; }
  bool UpdatesInPlace() const override { return true; }
  std::string Render(const Notification& n, const std::string& delivery_id) const override;
  // A node's reply in the rollout's thread: {"text": "<one line>"}.
  std::string RenderReply(const Notification& n) const override;
  std::vector<std::string> Keys() const override { return {"token-file", "channel", "threads"}; }
  std::string KeysUsage() const override { return "token-file=FILE,channel=ID[,threads=nodes]"; }
  absl::Status TakeKeys(const FormatKeys& keys, NotifyTarget& target) const override;
  std::string DefaultUrl() const override { return "https://slack.com/api"; }
  std::unique_ptr<Poster> NewPoster(const NotifyTarget& target,
                                    const PostContext& context) const override;
};

// Text safe in Slack's mrkdwn: &, < and > escaped, as Slack asks of message text, and no
// mention (core/inert_text.h InertAngleMarkup).
std::string SlackEscape(const std::string& text);

}  // namespace tr::reconciler::notify
