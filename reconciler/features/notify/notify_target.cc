#include "reconciler/features/notify/notify_target.h"

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

// Slack's Web API, where format=slack-bot calls chat.postMessage and chat.update.
constexpr const char* kSlackWebApiUrl = "https://slack.com/api";

// The keys only format=slack-bot takes: checked, and the token read.
absl::Status TakeSlackBotKeys(const std::string& token_file, const std::string& threads,
                              NotifyTarget& target) {
  const bool bot = target.format->Via() == Transport::kSlackApi;
  if (!bot) {
    if (!token_file.empty() || !target.channel.empty() || !threads.empty()) {
      return NotifyFlagError(
          "token-file=, channel= and threads= are keys of format=slack-bot only");
    }
    return absl::OkStatus();
  }
  if (token_file.empty())
    return NotifyFlagError("format=slack-bot needs token-file= (the bot token)");
  if (target.channel.empty()) {
    return NotifyFlagError(
        "format=slack-bot needs channel= (the channel's id, such as C0123456789)");
  }
  if (!threads.empty() && threads != "nodes") return NotifyFlagError("threads= takes only nodes");
  target.thread_per_node = threads == "nodes";
  absl::StatusOr<std::string> token = ReadSecretFile(token_file);
  if (!token.ok()) return NotifyFlagError(std::string(token.status().message()));
  target.bot_token = *std::move(token);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NotifyTarget> ParseNotifyTarget(std::string_view spec) {
  NotifyTarget target;
  std::string url, url_file, format = "json", secret_file, token_file, threads;
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
    } else if (key == "token-file") {
      token_file = value;
    } else if (key == "channel") {
      target.channel = value;
    } else if (key == "threads") {
      threads = value;
    } else if (absl::Status bad; target.filter.Take(key, value, bad)) {
      if (!bad.ok()) return bad;
    } else {
      return NotifyFlagError(
          "unknown key \"" + key +
          "\" (want url, url-file, format, secret-file, token-file, channel, threads, " +
          std::string(kNotifyFilterKeys) + ")");
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
  if (url.empty() && format == "slack-bot") url = kSlackWebApiUrl;
  if (url.empty()) return NotifyFlagError("url= or url-file= is required");
  if (absl::Status s = SplitUrl(url, target); !s.ok()) {
    // The URL's file is a secret: say which file, never what it holds.
    return url_file.empty() ? s
                            : absl::InvalidArgumentError(std::string(s.message()) +
                                                         " (the URL of " + url_file + ")");
  }
  target.format = MessageFormatNamed(format);
  if (target.format == nullptr) return NotifyFlagError("format must be " + MessageFormatNames());
  if (secret_file.empty() && target.format->NeedsSecret()) {
    return NotifyFlagError("format=" + format + " needs secret-file= (bodies are signed)");
  }
  if (!secret_file.empty() && !target.format->NeedsSecret()) {
    return NotifyFlagError("format=" + format +
                           " takes no secret-file= (its bodies are not signed)");
  }
  if (absl::Status s = TakeSlackBotKeys(token_file, threads, target); !s.ok()) return s;
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
