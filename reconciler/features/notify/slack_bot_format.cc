#include "reconciler/features/notify/slack_bot_format.h"

#include "core/inert_text.h"
#include "core/timestamp.h"
#include "nlohmann/json.hpp"
#include "reconciler/features/notify/chat_message.h"
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

std::string SlackBotFormat::RenderReply(const Notification& n) {
  return SlackFormat{}.Render(n, "");
}

}  // namespace tr::reconciler::notify
