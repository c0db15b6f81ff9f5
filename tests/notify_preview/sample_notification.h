// The sample rollout event the manual's previews show and the chat format tests render: a
// node upgraded halfway through a Talos rollout, and the other events of that same rollout.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "reconciler/features/notify/notification.h"

namespace tr::notify_preview {

// The delivery id the previews render with (the daemon makes a UUID per delivery).
inline constexpr char kSampleDeliveryId[] = "0f9c2b1e-8d7a-4c3b-9e2f-1a2b3c4d5e6f";

// prod-eu-1's node w-0 upgraded to Talos 1.12.0, 2 of 5.
reconciler::notify::Notification SampleNotification();
// One of each event, of that rollout (started, node upgraded, completed) and of its
// cluster's later troubles (failed, blocked, waiting for a gate).
std::vector<reconciler::notify::Notification> SampleRollout();

}  // namespace tr::notify_preview
