// The message each rollout has at a receiver that keeps one message per rollout and updates it
// (Slack's `ts`, Discord's message id), kept in <spool>/<receiver>/rollout-messages (JSON; not a delivery, whose files end .json) so that a
// restarted reconciler updates the same message instead of posting a second one. The file is
// rewritten (atomically, 0600) each time an id is learnt or forgotten; the newest
// kMaxMessageIds rollouts are kept.
//
// Thread-compatible: one receiver's sender uses it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "reconciler/features/notify/notification.h"

namespace tr::reconciler::notify {

inline constexpr size_t kMaxMessageIds = 256;

// What makes notifications one rollout's: the cluster and the commit rolled out.
// "prod-eu-1@9a1c7e2f..."
std::string RolloutKey(const Notification& n);

class MessageIds {
 public:
  explicit MessageIds(std::filesystem::path file) : file_(std::move(file)) {}

  // Reads the file; a missing file is none known. An unreadable one is an error (the caller
  // says so and goes on knowing none).
  absl::Status Load();
  std::optional<std::string> Find(const std::string& rollout) const;
  // Remembers `id` as the rollout's message, durably when it returns OK.
  absl::Status Put(const std::string& rollout, const std::string& id);
  // The rollout's message is gone (deleted by someone): the next delivery posts a new one.
  absl::Status Forget(const std::string& rollout);

 private:
  absl::Status Save() const;

  std::filesystem::path file_;
  std::vector<std::pair<std::string, std::string>> ids_;  // oldest first
};

}  // namespace tr::reconciler::notify
