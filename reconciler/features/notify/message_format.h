// How a notification is written for a receiver: one class per format, chosen per `--notify`
// entry by its `format=` name. A new format is one file with its class and one line in the
// table of message_format.cc.
//
// Formats are immutable values; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "reconciler/features/notify/notification.h"

namespace tr::reconciler::notify {

// How a format's bodies reach the receiver.
enum class Transport {
  kPost,            // each delivery POSTed to the URL (signed when NeedsSecret)
  kSlackApi,        // Slack's Web API: chat.postMessage, then chat.update of the same message
  kDiscordWebhook,  // a Discord webhook: executed with wait=true, then its message edited
};

class MessageFormat {
 public:
  virtual ~MessageFormat() = default;
  // The name in `format=`: "json", "slack", "teams", "mattermost", "googlechat".
  virtual std::string_view Name() const = 0;
  // Whether a receiver of this format must have a secret, and may: its deliveries are signed
  // (Standard Webhooks, standard_webhooks.h).
  virtual bool NeedsSecret() const = 0;
  // The request body of `n`, sent as delivery `delivery_id` (the same on every retry). For a
  // format that updates one message per rollout, the message as it should read now.
  virtual std::string Render(const Notification& n, const std::string& delivery_id) const = 0;
  virtual Transport Via() const { return Transport::kPost; }
  // One message per rollout, updated in place (Transport other than kPost).
  bool UpdatesInPlace() const { return Via() != Transport::kPost; }
  // The request path (query included) to POST to, from the one in the URL: the same, unless
  // the receiver needs a query parameter for how it files messages (googlechat's threads).
  virtual std::string Path(const std::string& configured_path) const { return configured_path; }
};

// The format called `name`; nullptr for an unknown name.
std::shared_ptr<const MessageFormat> MessageFormatNamed(std::string_view name);

// The names MessageFormatNamed knows, for messages: "json, slack, ... or googlechat".
std::string MessageFormatNames();

}  // namespace tr::reconciler::notify
