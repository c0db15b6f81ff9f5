// A Discord webhook (format=discord): one message per rollout with one embed, posted with
// `wait=true` (so Discord answers with the message's id) and then edited in place
// (discord_poster.h). The embed: the cluster and versions as title, where the rollout stands
// and its latest step as description, a colour per state, the phase, progress and commit as
// fields, the time of the latest event. Mentions are disabled: a node or cluster name never
// pings anyone. Its poster is discord_poster.h.
//
// Thread-safe.
#pragma once

#include "reconciler/features/notify/message_format.h"

namespace tr::reconciler::notify {

class DiscordFormat final : public MessageFormat {
 public:
  std::string_view Name() const override { return "discord"; }
  bool NeedsSecret() const override { return false; }
  bool UpdatesInPlace() const override { return true; }
  std::unique_ptr<Poster> NewPoster(const NotifyTarget& target,
                                    const PostContext& context) const override;
  std::string Render(const Notification& n, const std::string& delivery_id) const override;
};

}  // namespace tr::reconciler::notify
