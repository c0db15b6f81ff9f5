// Where outbound notifications go: one `--notify` entry per receiver, written
// `url=<http(s) URL>,format=<format>[,secret-file=<path>]`, with the keys of format=slack-bot
// (`token-file=`, `channel=`, `threads=nodes`; url defaults to Slack's Web API) and the
// filter keys (notify_filter.h).
//
// Values and pure parsing (the secret file is read once); thread-compatible.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "reconciler/features/notify/message_format.h"
#include "reconciler/features/notify/notify_filter.h"

namespace tr::reconciler::notify {

struct NotifyTarget {
  std::string origin;  // "https://hooks.example.com:8443"
  std::string path;    // "/talos" (at least "/"), query included
  std::shared_ptr<const MessageFormat> format;  // never null once parsed
  // The Standard Webhooks key (standard_webhooks.h) from secret-file; set exactly when the
  // format NeedsSecret().
  std::string signing_key;
  NotifyFilter filter;  // which notifications it wants
  // format=slack-bot: the bot token (from token-file, never logged), the channel's id, and
  // whether each node upgraded is a reply in the rollout message's thread.
  std::string bot_token;
  std::string channel;
  bool thread_per_node = false;
  // A stable name for the target that does not reveal the URL's path (which may hold a token,
  // as Slack's do): 12 hex digits. Logs name a target by origin and key, never by URL.
  std::string key;
};

// Parses one `--notify` entry and reads its secret file (a Standard Webhooks secret,
// "whsec_<base64>"). InvalidArgument naming the problem: unknown key, missing url, a scheme
// other than http or https, an unknown format, a format that needs a secret without one or
// one that signs nothing with one, an unreadable secret file or one that holds no Standard
// Webhooks secret (never quoted), slack-bot without its token or channel, a slack-bot key
// given to another format, a bad filter value.
absl::StatusOr<NotifyTarget> ParseNotifyTarget(std::string_view spec);

}  // namespace tr::reconciler::notify
