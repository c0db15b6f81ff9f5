// A notification format: how a notification is written for a receiver, the keys of a
// `--notify` entry it takes besides the common ones, and how its bodies reach the receiver (its
// Poster, poster.h). One class per format, chosen per `--notify` entry by its `format=` name
// from one registry. A new format is one file with its class and one line in the table of
// message_format.cc (or a RegisterMessageFormat call, as the tests' toy format does); nothing
// else names it.
//
// Formats are immutable values; thread-safe. The registry is thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "reconciler/features/notify/notification.h"

namespace tr::reconciler::notify {

struct NotifyTarget;
struct PostContext;
class Poster;

// The keys of one `--notify` entry that no receiver has in common (a format's own), by name
// as written; a key given with an empty value is as if not given.
using FormatKeys = std::map<std::string, std::string>;

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
  // The body of a node's reply in the rollout message's thread (a target with
  // thread_per_node): by default, what Render writes.
  virtual std::string RenderReply(const Notification& n) const { return Render(n, ""); }
  // One message per rollout, updated in place: its poster keeps the message's id (MessageIds).
  virtual bool UpdatesInPlace() const { return false; }
  // The request path (query included) to POST to, from the one in the URL: the same, unless
  // the receiver needs a query parameter for how it files messages (googlechat's threads).
  virtual std::string Path(const std::string& configured_path) const { return configured_path; }

  // The keys it takes besides the common ones ({"token-file", "channel", "threads"}), and how
  // --help writes them ("token-file=FILE,channel=ID[,threads=nodes]"); none by default.
  virtual std::vector<std::string> Keys() const { return {}; }
  virtual std::string KeysUsage() const { return ""; }
  // Checks the entry's values of Keys() and sets what they mean on `target` (its URL, path and
  // secret already set). InvalidArgument naming the problem (NotifyFlagError).
  virtual absl::Status TakeKeys(const FormatKeys& keys, NotifyTarget& target) const;
  // The URL of an entry that gives none; "" when url= or url-file= is required.
  virtual std::string DefaultUrl() const { return ""; }

  // How its deliveries reach `target`: by default a plain POST to the URL, signed when the
  // format NeedsSecret (poster.cc). `target` and what `context` points to outlive the poster.
  virtual std::unique_ptr<Poster> NewPoster(const NotifyTarget& target,
                                            const PostContext& context) const;
};

// The format called `name`; nullptr for an unknown name.
std::shared_ptr<const MessageFormat> MessageFormatNamed(std::string_view name);

// The names MessageFormatNamed knows, for messages: "json, slack, ... or googlechat".
std::string MessageFormatNames();

// Every format known, built-in first, then in the order registered.
std::vector<std::shared_ptr<const MessageFormat>> MessageFormats();

// Adds `format` to the registry, after the built-in ones; a name already known is refused
// (AlreadyExists). For formats outside the built-in table (the tests' toy format).
absl::Status RegisterMessageFormat(std::shared_ptr<const MessageFormat> format);

}  // namespace tr::reconciler::notify
