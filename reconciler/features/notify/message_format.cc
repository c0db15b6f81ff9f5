#include "reconciler/features/notify/message_format.h"

#include <array>

#include "reconciler/features/notify/discord_format.h"
#include "reconciler/features/notify/googlechat_format.h"
#include "reconciler/features/notify/json_format.h"
#include "reconciler/features/notify/mattermost_format.h"
#include "reconciler/features/notify/slack_bot_format.h"
#include "reconciler/features/notify/slack_format.h"
#include "reconciler/features/notify/teams_format.h"

namespace tr::reconciler::notify {
namespace {

// Every format there is.
std::array<std::shared_ptr<const MessageFormat>, 7> Formats() {
  return {std::make_shared<JsonFormat>(),       std::make_shared<SlackFormat>(),
          std::make_shared<SlackBotFormat>(),   std::make_shared<TeamsFormat>(),
          std::make_shared<DiscordFormat>(),    std::make_shared<MattermostFormat>(),
          std::make_shared<GoogleChatFormat>()};
}

}  // namespace

std::shared_ptr<const MessageFormat> MessageFormatNamed(std::string_view name) {
  for (auto& format : Formats()) {
    if (format->Name() == name) return format;
  }
  return nullptr;
}

std::string MessageFormatNames() {
  std::string names;
  const auto formats = Formats();
  for (size_t i = 0; i < formats.size(); ++i) {
    if (i > 0) names += i + 1 == formats.size() ? " or " : ", ";
    names += formats[i]->Name();
  }
  return names;
}

}  // namespace tr::reconciler::notify
