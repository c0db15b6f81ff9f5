#include "reconciler/features/notify/discord_format.h"

#include "core/inert_text.h"
#include "core/timestamp.h"
#include "nlohmann/json.hpp"
#include "reconciler/features/notify/chat_message.h"
#include "reconciler/features/notify/discord_poster.h"

namespace tr::reconciler::notify {
namespace {

// Discord's limits on an embed's parts (title 256, description 4096, field value 1024).
std::string Cut(const std::string& text, size_t limit) {
  return text.size() <= limit ? text : text.substr(0, limit - 3) + "...";
}

}  // namespace

std::string DiscordFormat::Render(const Notification& n, const std::string& /*delivery_id*/) const {
  std::string description = "Rollout " + StateLine(n);
  const std::string message = core::InertMarkdown(n.message);
  const std::string latest = n.node.empty() ? message : n.node + ": " + message;
  if (!latest.empty()) description += "\n" + latest;
  nlohmann::json fields = nlohmann::json::array();
  auto field = [&fields](const std::string& name, const std::string& value) {
    if (!value.empty()) fields.push_back({{"name", name}, {"value", Cut(value, 1024)}, {"inline", true}});
  };
  field("Phase", n.phase);
  field("Progress", n.progress);
  field("Commit", ShortCommit(n.commit));
  const nlohmann::json embed{{"title", Cut(n.cluster + ": " + VersionsLine(n), 256)},
                             {"description", Cut(description, 4096)},
                             {"color", ToneRgb(ToneOf(n.event))},
                             {"fields", fields},
                             {"timestamp", core::FormatTimestamp(n.at)},
                             {"footer", {{"text", "talos-reconciler"}}}};
  return DumpPayload(
      {{"embeds", {embed}}, {"allowed_mentions", {{"parse", nlohmann::json::array()}}}});
}

std::unique_ptr<Poster> DiscordFormat::NewPoster(const NotifyTarget& target,
                                                 const PostContext& context) const {
  return std::make_unique<DiscordPoster>(target, context);
}

}  // namespace tr::reconciler::notify
