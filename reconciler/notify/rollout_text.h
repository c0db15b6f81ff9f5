// The words and colour of a rollout's message, shared by the formats that keep one message per
// rollout and update it (slack-bot, discord): what it says depends on the latest event only,
// since every notification carries the rollout's whole state (phase, versions, progress).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "reconciler/notify/notification.h"

namespace tr::reconciler::notify {

// "Talos 1.11.6 → 1.12.0, Kubernetes 1.35.0": a component with a target other than its current
// version shows both.
std::string VersionsLine(const Notification& n);

// Where the rollout stands: "in progress (2/5 nodes)", "completed", "failed", "blocked",
// "waiting for a health gate".
std::string StateLine(const Notification& n);

// A colour for the state, as 0xRRGGBB: blue in progress, green completed, amber blocked or
// waiting, red failed.
uint32_t StateColor(NotificationEvent event);

// The first 12 characters of the commit, or "" (a commit id is long and says little more).
std::string ShortCommit(const std::string& commit);

}  // namespace tr::reconciler::notify
