// A receiver's spool: each delivery waiting to be sent is one JSON file in the receiver's
// directory (0600: a body names clusters and nodes), named so that names sort in creation
// order across restarts. WebhookNotifier keeps the queue; this is the record and its file.
//
// Values and file IO; thread-compatible.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <string>

#include "base/env.h"

namespace tr::reconciler::notify {

struct Spooled {
  std::filesystem::path file;
  std::string delivery;  // a version 4 UUID, the same on every retry (the webhook-id)
  std::string event;     // "node.upgraded", for the log
  std::string body;      // as the format rendered it
  // Formats that keep one message per rollout (MessageFormat::UpdatesInPlace): the rollout's
  // key (RolloutKey), whose message this delivery posts or updates; empty for a plain POST.
  std::string rollout;
  bool reply = false;  // a reply in the thread of the rollout's message (threads=nodes)
  int attempts = 0;
  Env::TimePoint due;  // not before; not kept on disk (a restart sends at once)
};

// A version 4 UUID drawn from `rng`.
std::string NewDeliveryId(std::mt19937_64& rng);

// Writes `s` to its file, atomically (a temporary file renamed). False when it could not.
bool SaveSpooled(const Spooled& s);

// The delivery in `file`; nullopt when the file is not one (unreadable, or no body).
std::optional<Spooled> LoadSpooled(const std::filesystem::path& file);

}  // namespace tr::reconciler::notify
