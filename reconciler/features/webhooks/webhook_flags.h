// The settings of the inbound webhook listener (`--webhook-*`): registered and checked here,
// used by the daemon's wiring (reconciler/app/daemon/forge_wiring).
//
// Values only; thread-compatible.
#pragma once

#include <filesystem>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace tr::reconciler::webhooks {

struct WebhookFlags {
  std::string listen;  // host:port of the webhook listener; empty: none
  std::filesystem::path secret_file;
  int queue = 256;  // verified deliveries waiting; a full queue answers 503

  void AddFlags(CLI::App& cmd);
  // A listener needs a readable secret of at least kMinWebhookSecretBytes; a queue of 1 to
  // 100,000. InvalidArgument naming the flag.
  absl::Status Finish() const;
};

}  // namespace tr::reconciler::webhooks
