// What a webhook delivery says, in one vocabulary for every forge: each forge's dialect
// (forge_dialect.h) reads its own headers and payloads into these values, and the listener
// (reconciler/features/webhooks) acts on them. A delivery's payload is untrusted: what to apply is
// always fetched from the configured repository, never from a URL or content in the payload.
//
// Values and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tr::reconciler::forge {

// One header of an inbound request by name (case-insensitive); nullopt when it was not sent.
using HeaderLookup = std::function<std::optional<std::string>(std::string_view name)>;

// The headers of a delivery that matter, already picked by the sender's dialect.
struct WebhookHeaders {
  std::string event;      // GitHub/Gitea "push", GitLab "Push Hook"
  std::string delivery;   // the sender's delivery id; empty when the sender has none
  std::string signature;  // GitHub and generic "sha256=<hex>", Gitea "<hex>"; empty for GitLab
  std::string token;      // GitLab's shared token; empty for the others
};

enum class WebhookKind { kPush, kPullRequest, kPing, kUnhandled };

// What happened to a pull (merge) request, in one vocabulary for every forge.
enum class PullRequestAction { kOpened, kUpdated, kReopened, kClosed, kMerged, kOther };
const char* PullRequestActionName(PullRequestAction action);  // "opened", "updated", ...

struct WebhookEvent {
  std::string forge;  // the sender's dialect: "github", "gitlab", "gitea", ..., "generic"
  WebhookKind kind = WebhookKind::kUnhandled;
  std::string event;     // the event header as sent
  std::string delivery;  // the delivery id, or "sha256:<hex of body>" when the sender sent none
  // kPush
  std::string ref;          // "refs/heads/main"
  std::string after;        // the new tip
  bool any_branch = false;  // the sender did not say which branch moved: poll the watched one
  // kPullRequest
  int64_t number = 0;  // GitHub/Gitea PR number, GitLab MR iid
  PullRequestAction action = PullRequestAction::kOther;
  std::string head_sha;
  std::string base_branch;
  std::string merge_commit;  // set once merged
};

}  // namespace tr::reconciler::forge
