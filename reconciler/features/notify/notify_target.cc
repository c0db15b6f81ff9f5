#include "reconciler/features/notify/notify_target.h"

#include <algorithm>

#include "base/hmac.h"
#include "base/secret_file.h"
#include "reconciler/features/notify/standard_webhooks.h"

namespace tr::reconciler::notify {
namespace {

absl::Status SplitUrl(const std::string& url, NotifyTarget& target) {
  const size_t scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    return NotifyFlagError("url must start with http(s)://");
  const size_t path_start = url.find('/', scheme_end + 3);
  target.origin = url.substr(0, path_start);
  target.path = path_start == std::string::npos ? "/" : url.substr(path_start);
  if (target.origin.size() <= scheme_end + 3) return NotifyFlagError("url has no host");
  return absl::OkStatus();
}

// "a=, b= and c= are keys": `keys` as written in an entry, with the verb.
std::string KeyList(const std::vector<std::string>& keys) {
  if (keys.size() == 1) return keys[0] + "= is a key";
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += i + 1 == keys.size() ? " and " : ", ";
    out += keys[i] + "=";
  }
  return out + " are keys";
}

// The format that takes `key` of its own; nullptr when none does.
std::shared_ptr<const MessageFormat> FormatTaking(const std::string& key) {
  for (auto& format : MessageFormats()) {
    for (const std::string& own : format->Keys()) {
      if (own == key) return format;
    }
  }
  return nullptr;
}

// "token-file, channel, threads": every format's own keys, for the message of an unknown key.
std::string FormatKeyNames() {
  std::string names;
  for (const auto& format : MessageFormats()) {
    for (const std::string& key : format->Keys()) names += key + ", ";
  }
  return names;
}

// Hands `target`'s format the keys of its own, refusing one that another format takes.
absl::Status TakeFormatKeys(const FormatKeys& keys, NotifyTarget& target) {
  const MessageFormat& format = *target.format;
  const std::vector<std::string> own = format.Keys();
  for (const auto& [key, value] : keys) {
    if (value.empty() || std::find(own.begin(), own.end(), key) != own.end()) continue;
    const auto owner = FormatTaking(key);
    return NotifyFlagError(KeyList(owner->Keys()) + " of format=" +
                           std::string(owner->Name()) + " only");
  }
  return format.TakeKeys(keys, target);
}

}  // namespace

absl::StatusOr<NotifyTarget> ParseNotifyTarget(std::string_view spec) {
  NotifyTarget target;
  std::string url, url_file, format = "json", secret_file;
  FormatKeys format_keys;
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
    } else if (key == "url-file") {
      url_file = value;
    } else if (key == "format") {
      format = value;
    } else if (key == "secret-file") {
      secret_file = value;
    } else if (FormatTaking(key) != nullptr) {
      format_keys[key] = value;
    } else if (absl::Status bad; target.filter.Take(key, value, bad)) {
      if (!bad.ok()) return bad;
    } else {
      return NotifyFlagError("unknown key \"" + key + "\" (want url, url-file, format, secret-file, " +
                             FormatKeyNames() + std::string(kNotifyFilterKeys) + ")");
    }
  }
  if (!url_file.empty()) {
    // A webhook URL that holds its credential (Slack, Discord, Teams, Google Chat) stays out
    // of the command line, which `ps` and a pod's spec show.
    if (!url.empty()) return NotifyFlagError("url= and url-file= exclude each other");
    absl::StatusOr<std::string> read = ReadSecretFile(url_file);
    if (!read.ok()) return NotifyFlagError(std::string(read.status().message()));
    url = *std::move(read);
    if (url.find(',') != std::string::npos)
      return NotifyFlagError(url_file + ": the URL may not contain a comma");
  }
  target.format = MessageFormatNamed(format);
  if (url.empty() && target.format != nullptr) url = target.format->DefaultUrl();
  if (url.empty()) return NotifyFlagError("url= or url-file= is required");
  if (absl::Status s = SplitUrl(url, target); !s.ok()) {
    // The URL's file is a secret: say which file, never what it holds.
    return url_file.empty() ? s
                            : absl::InvalidArgumentError(std::string(s.message()) +
                                                         " (the URL of " + url_file + ")");
  }
  if (target.format == nullptr) return NotifyFlagError("format must be " + MessageFormatNames());
  if (secret_file.empty() && target.format->NeedsSecret()) {
    return NotifyFlagError("format=" + format + " needs secret-file= (bodies are signed)");
  }
  if (!secret_file.empty() && !target.format->NeedsSecret()) {
    return NotifyFlagError("format=" + format +
                           " takes no secret-file= (its bodies are not signed)");
  }
  if (absl::Status s = TakeFormatKeys(format_keys, target); !s.ok()) return s;
  if (!secret_file.empty()) {
    absl::StatusOr<std::string> secret = ReadSecretFile(secret_file);
    if (!secret.ok()) return NotifyFlagError(std::string(secret.status().message()));
    absl::StatusOr<std::string> key = StandardWebhookKey(*secret);
    if (!key.ok()) return NotifyFlagError(secret_file + ": " + std::string(key.status().message()));
    target.signing_key = *std::move(key);
  }
  // The channel is part of the receiver: another channel is another message per rollout.
  target.key =
      HmacSha256Hex("notify-target",
                    url + "," + format + (target.channel.empty() ? "" : "," + target.channel))
          .substr(0, 12);
  return target;
}

}  // namespace tr::reconciler::notify
