// Inbound webhook deliveries from GitHub, GitLab and Gitea/Forgejo: checking who sent them
// and reading the little we take from them — which branch moved, or which pull request
// changed. A delivery's payload is untrusted: what to apply is always fetched from the
// configured repository, never from a URL or content in the payload.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tr::reconciler::forge {

// Who sends a delivery. kGeneric is any other Git server (a plain `git daemon`, cgit, a
// post-receive hook): it has no forge API, so it is never a `--forge`, only a webhook sender.
enum class Forge { kGithub, kGitlab, kGitea, kGeneric };

// "github", "gitlab", "gitea", "generic".
const char* ForgeName(Forge forge);
// The forge named `name` ("github", "gitlab", "gitea"); nullopt for any other name, "generic"
// included (it has no API to report to).
std::optional<Forge> ForgeFromName(std::string_view name);

// The headers of a delivery that matter, already picked per forge (see HeaderNames).
struct WebhookHeaders {
  std::string event;      // GitHub/Gitea "push", GitLab "Push Hook"
  std::string delivery;   // the sender's delivery id; empty when the sender has none
  std::string signature;  // GitHub and generic "sha256=<hex>", Gitea "<hex>"; empty for GitLab
  std::string token;      // GitLab's shared token; empty for the others
};

enum class WebhookKind { kPush, kPullRequest, kPing, kUnhandled };

// What happened to a pull (merge) request, in one vocabulary for the three forges.
enum class PullRequestAction { kOpened, kUpdated, kReopened, kClosed, kMerged, kOther };
const char* PullRequestActionName(PullRequestAction action);  // "opened", "updated", ...

struct WebhookEvent {
  Forge forge = Forge::kGithub;
  WebhookKind kind = WebhookKind::kUnhandled;
  std::string event;     // the event header as sent
  std::string delivery;  // the delivery id, or "sha256:<hex of body>" when the sender sent none
  // kPush
  std::string ref;    // "refs/heads/main"
  std::string after;  // the new tip
  // kPullRequest
  int64_t number = 0;  // GitHub/Gitea PR number, GitLab MR iid
  PullRequestAction action = PullRequestAction::kOther;
  std::string head_sha;
  std::string base_branch;
  std::string merge_commit;  // set once merged
};

// Checks that `body` was sent by someone holding `secret`: GitHub's
// `X-Hub-Signature-256: sha256=<hex HMAC-SHA256>`, Gitea's `X-Gitea-Signature: <hex>`, GitLab's
// `X-Gitlab-Token: <secret>`, generic `X-Signature-256: sha256=<hex HMAC-SHA256>`; every
// comparison takes constant time. Unauthenticated when the signature is missing or wrong.
absl::Status VerifyWebhookSignature(Forge forge, std::string_view secret,
                                    const WebhookHeaders& headers, std::string_view body);

// Reads a verified delivery. Push and pull-request events must carry the fields named in
// WebhookEvent, else InvalidArgument naming the field; other events (and `ping`) are returned
// with their kind and no fields. InvalidArgument when `body` is not a JSON object.
// A generic delivery is always a push: it says only that something moved; its `ref` is
// optional (absent: the watched branch is polled) and `after` is not read.
absl::StatusOr<WebhookEvent> ParseWebhook(Forge forge, const WebhookHeaders& headers,
                                          std::string_view body);

}  // namespace tr::reconciler::forge

namespace tr::reconciler::forge {

// Whether the reconciler acts on `event` when it watches `branch`: a push to that branch, or a
// pull request into it that was opened, updated, reopened, merged or closed (its preview is
// dropped). Everything else is answered and ignored.
bool IsRelevant(const WebhookEvent& event, const std::string& branch);

}  // namespace tr::reconciler::forge
