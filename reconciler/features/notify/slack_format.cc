#include "reconciler/features/notify/slack_format.h"

#include "reconciler/features/notify/chat_message.h"

namespace tr::reconciler::notify {

std::string SlackFormat::Render(const Notification& n, const std::string& /*delivery_id*/) const {
  return DumpPayload({{"text", SummaryLine(n)}});
}

}  // namespace tr::reconciler::notify
