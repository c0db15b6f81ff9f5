#include "reconciler/features/notify/slack_bot_format.h"

#include "base/secret_file.h"
#include "core/inert_text.h"
#include "core/timestamp.h"
#include "nlohmann/json.hpp"
#include "reconciler/features/notify/chat_message.h"
#include "reconciler/features/notify/notify_target.h"
#include "reconciler/features/notify/slack_api_poster.h"
#include "reconciler/features/notify/slack_format.h"

namespace tr::reconciler::notify {
namespace {

const char* StateEmoji(NotificationEvent event) {
  switch (event) {
    case NotificationEvent::kRolloutCompleted:
      return ":white_check_mark:";
    case NotificationEvent::kRolloutFailed:
      return ":x:";
    case NotificationEvent::kRolloutBlocked:
      return ":no_entry:";
    case NotificationEvent::kWaitingForGate:
      return ":double_vertical_bar:";
    default:
      return ":arrows_counterclockwise:";
  }
}

nlohmann::json Mrkdwn(const std::string& text) {
  return {{"type", "section"}, {"text", {{"type", "mrkdwn"}, {"text", text}}}};
}

}  // namespace

std::string SlackEscape(const std::string& text) { return core::InertAngleMarkup(text); }

std::string SlackBotFormat::Render(const Notification& n, const std::string& /*delivery_id*/) const {
  const std::string headline = n.cluster + ": " + VersionsLine(n) + " — " + StateLine(n);
  nlohmann::json blocks = nlohmann::json::array();
  blocks.push_back(Mrkdwn(std::string(StateEmoji(n.event)) + " *" + SlackEscape(n.cluster) +
                          "* " + SlackEscape(VersionsLine(n)) + "\nRollout " +
                          SlackEscape(StateLine(n))));
  std::string latest = n.node.empty() ? n.message : "`" + n.node + "` " + n.message;
  if (!latest.empty()) blocks.push_back(Mrkdwn(SlackEscape(latest)));
  std::string context = "phase " + n.phase;
  if (!n.commit.empty()) context += " · commit " + ShortCommit(n.commit);
  context += " · updated " + core::FormatTimestamp(n.at);
  blocks.push_back({{"type", "context"},
                    {"elements", {{{"type", "mrkdwn"}, {"text", SlackEscape(context)}}}}});
  return DumpPayload({{"text", headline}, {"blocks", blocks}});
}

std::string SlackBotFormat::RenderReply(const Notification& n) const {
  return SlackFormat{}.Render(n, "");
}

absl::Status SlackBotFormat::TakeKeys(const FormatKeys& keys, NotifyTarget& target) const {
  const auto value = [&keys](const char* key) {
    const auto it = keys.find(key);
    return it == keys.end() ? std::string() : it->second;
  };
  const std::string token_file = value("token-file"), threads = value("threads");
  target.channel = value("channel");
  if (token_file.empty())
    return NotifyFlagError("format=slack-bot needs token-file= (the bot token)");
  if (target.channel.empty()) {
    return NotifyFlagError(
        "format=slack-bot needs channel= (the channel's id, such as C0123456789)");
  }
  if (!threads.empty() && threads != "nodes") return NotifyFlagError("threads= takes only nodes");
  target.thread_per_node = threads == "nodes";
  absl::StatusOr<std::string> token = ReadSecretFile(token_file);
  if (!token.ok()) return NotifyFlagError(std::string(token.status().message()));
  target.bot_token = *std::move(token);
  return absl::OkStatus();
}

std::unique_ptr<Poster> SlackBotFormat::NewPoster(const NotifyTarget& target,
                                                  const PostContext& context) const {
  return std::make_unique<SlackApiPoster>(target, context);
}

}  // namespace tr::reconciler::notify
