#include "reconciler/notify/notify_target.h"

#include "base/hmac.h"
#include "base/secret_file.h"
#include "reconciler/notify/standard_webhooks.h"

namespace tr::reconciler::notify {
namespace {

absl::Status Invalid(const std::string& why) {
  return absl::InvalidArgumentError("--notify: " + why);
}

absl::Status SplitUrl(const std::string& url, NotifyTarget& target) {
  const size_t scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return Invalid("url must start with http(s)://");
  const size_t path_start = url.find('/', scheme_end + 3);
  target.origin = url.substr(0, path_start);
  target.path = path_start == std::string::npos ? "/" : url.substr(path_start);
  if (target.origin.size() <= scheme_end + 3) return Invalid("url has no host");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NotifyTarget> ParseNotifyTarget(std::string_view spec) {
  NotifyTarget target;
  std::string url, format = "json", secret_file;
  for (size_t start = 0; start <= spec.size();) {
    size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    const std::string_view field = spec.substr(start, comma - start);
    start = comma + 1;
    const size_t eq = field.find('=');
    const std::string key(field.substr(0, eq));
    const std::string value(eq == std::string_view::npos ? "" : field.substr(eq + 1));
    if (key == "url") {
      url = value;
    } else if (key == "format") {
      format = value;
    } else if (key == "secret-file") {
      secret_file = value;
    } else {
      return Invalid("unknown key \"" + key + "\" (want url, format, secret-file)");
    }
  }
  if (url.empty()) return Invalid("url= is required");
  if (absl::Status s = SplitUrl(url, target); !s.ok()) return s;
  target.format = MessageFormatNamed(format);
  if (target.format == nullptr) return Invalid("format must be " + MessageFormatNames());
  if (secret_file.empty() && target.format->NeedsSecret()) {
    return Invalid("format=" + format + " needs secret-file= (bodies are signed)");
  }
  if (!secret_file.empty() && !target.format->NeedsSecret()) {
    return Invalid("format=" + format + " takes no secret-file= (its bodies are not signed)");
  }
  if (!secret_file.empty()) {
    absl::StatusOr<std::string> secret = ReadSecretFile(secret_file);
    if (!secret.ok()) return Invalid(std::string(secret.status().message()));
    absl::StatusOr<std::string> key = StandardWebhookKey(*secret);
    if (!key.ok()) return Invalid(secret_file + ": " + std::string(key.status().message()));
    target.signing_key = *std::move(key);
  }
  target.key = HmacSha256Hex("notify-target", url + "," + format).substr(0, 12);
  return target;
}

}  // namespace tr::reconciler::notify
