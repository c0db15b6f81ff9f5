// Standard Webhooks, the open specification of signed webhooks: how format=json deliveries are
// signed, so that a receiver checks them with the library it already has (`standardwebhooks`
// for JavaScript, Python, Go, ...) instead of a recipe of ours.
//   webhook-id:        the delivery id, the same on every retry (receivers drop duplicates)
//   webhook-timestamp: Unix seconds of this attempt (receivers refuse one far from their clock)
//   webhook-signature: v1,<base64 of HMAC-SHA256(key, "<id>.<timestamp>.<body>")>
// The secret is written as the specification writes it: "whsec_", then the key in base64.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::reconciler::notify {

// The shortest key taken, in bytes (192 bits; `openssl rand -base64 32` makes 32).
inline constexpr size_t kMinStandardWebhookKeyBytes = 24;

// The key of `secret`: "whsec_<base64>" (surrounding whitespace ignored) whose key has at
// least kMinStandardWebhookKeyBytes. InvalidArgument for anything else; the message never
// quotes the secret.
absl::StatusOr<std::string> StandardWebhookKey(std::string_view secret);

// The three headers of delivery `id`, attempted at `timestamp` (Unix seconds), signed with `key`.
std::vector<std::pair<std::string, std::string>> StandardWebhookHeaders(std::string_view key,
                                                                        const std::string& id,
                                                                        int64_t timestamp,
                                                                        std::string_view body);

}  // namespace tr::reconciler::notify
