#include "reconciler/features/notify/message_format.h"

#include "base/mutex.h"
#include "reconciler/features/notify/discord_format.h"
#include "reconciler/features/notify/googlechat_format.h"
#include "reconciler/features/notify/json_format.h"
#include "reconciler/features/notify/mattermost_format.h"
#include "reconciler/features/notify/slack_bot_format.h"
#include "reconciler/features/notify/slack_format.h"
#include "reconciler/features/notify/teams_format.h"

namespace tr::reconciler::notify {
namespace {

struct FormatRegistry {
  Mutex mu;
  std::vector<std::shared_ptr<const MessageFormat>> formats ABSL_GUARDED_BY(mu);
};

// Every format there is: the built-in table, one line a format, and those registered since.
FormatRegistry& Registry() {
  static FormatRegistry* registry = [] {
    auto* r = new FormatRegistry;
    MutexLock lock(r->mu);
    r->formats = {std::make_shared<JsonFormat>(),       std::make_shared<SlackFormat>(),
                  std::make_shared<SlackBotFormat>(),   std::make_shared<TeamsFormat>(),
                  std::make_shared<DiscordFormat>(),    std::make_shared<MattermostFormat>(),
                  std::make_shared<GoogleChatFormat>()};
    return r;
  }();
  return *registry;
}

}  // namespace

absl::Status MessageFormat::TakeKeys(const FormatKeys& /*keys*/, NotifyTarget& /*target*/) const {
  return absl::OkStatus();
}

std::vector<std::shared_ptr<const MessageFormat>> MessageFormats() {
  FormatRegistry& registry = Registry();
  MutexLock lock(registry.mu);
  return registry.formats;
}

absl::Status RegisterMessageFormat(std::shared_ptr<const MessageFormat> format) {
  FormatRegistry& registry = Registry();
  MutexLock lock(registry.mu);
  for (const auto& known : registry.formats) {
    if (known->Name() == format->Name()) {
      return absl::AlreadyExistsError("format=" + std::string(format->Name()) + " is known");
    }
  }
  registry.formats.push_back(std::move(format));
  return absl::OkStatus();
}

std::shared_ptr<const MessageFormat> MessageFormatNamed(std::string_view name) {
  for (auto& format : MessageFormats()) {
    if (format->Name() == name) return format;
  }
  return nullptr;
}

std::string MessageFormatNames() {
  std::string names;
  const auto formats = MessageFormats();
  for (size_t i = 0; i < formats.size(); ++i) {
    if (i > 0) names += i + 1 == formats.size() ? " or " : ", ";
    names += formats[i]->Name();
  }
  return names;
}

}  // namespace tr::reconciler::notify
