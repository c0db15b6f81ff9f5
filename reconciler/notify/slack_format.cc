#include "reconciler/notify/slack_format.h"

#include "nlohmann/json.hpp"

namespace tr::reconciler::notify {

std::string SlackFormat::Render(const Notification& n, const std::string& /*delivery_id*/) const {
  std::string text = "*" + n.cluster + "* " + NotificationEventName(n.event);
  if (!n.node.empty()) text += " `" + n.node + "`";
  if (!n.talos_target.empty()) text += " (Talos " + n.talos_target + ")";
  if (!n.progress.empty()) text += " " + n.progress;
  if (!n.message.empty()) text += ": " + n.message;
  return nlohmann::json{{"text", text}}.dump(-1, ' ', false,
                                              nlohmann::json::error_handler_t::replace);
}

}  // namespace tr::reconciler::notify
