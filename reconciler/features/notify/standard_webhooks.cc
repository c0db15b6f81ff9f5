#include "reconciler/features/notify/standard_webhooks.h"

#include <cctype>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/hmac.h"
#include "core/base64.h"

namespace tr::reconciler::notify {

absl::StatusOr<std::string> StandardWebhookKey(std::string_view secret) {
  constexpr std::string_view kPrefix = "whsec_";
  std::string_view text = secret;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  constexpr char kWant[] =
      "a Standard Webhooks secret is whsec_ and the key in base64 (make one with: "
      "echo \"whsec_$(openssl rand -base64 32)\")";
  if (!text.starts_with(kPrefix)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the secret does not start with whsec_: ", kWant));
  }
  std::optional<std::string> key = core::DecodeBase64(text.substr(kPrefix.size()));
  if (!key) {
    return absl::InvalidArgumentError(
        absl::StrCat("the secret is not base64 after whsec_: ", kWant));
  }
  if (key->size() < kMinStandardWebhookKeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the secret's key has ", key->size(),
                                                   " bytes, fewer than ",
                                                   kMinStandardWebhookKeyBytes, ": ", kWant));
  }
  return *std::move(key);
}

std::vector<std::pair<std::string, std::string>> StandardWebhookHeaders(std::string_view key,
                                                                        const std::string& id,
                                                                        int64_t timestamp,
                                                                        std::string_view body) {
  const std::string seconds = std::to_string(timestamp);
  const std::string signature =
      core::EncodeBase64(HmacSha256(key, id + "." + seconds + "." + std::string(body)));
  return {
      {"webhook-id", id}, {"webhook-timestamp", seconds}, {"webhook-signature", "v1," + signature}};
}

}  // namespace tr::reconciler::notify
