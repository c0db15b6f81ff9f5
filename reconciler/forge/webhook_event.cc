#include "reconciler/forge/webhook_event.h"

#include "base/hmac.h"
#include "nlohmann/json.hpp"

namespace tr::reconciler::forge {
namespace {

using nlohmann::json;

absl::Status Unauthenticated(const char* why) { return absl::UnauthenticatedError(why); }

// The string at `path` ("pull_request/head/sha") in `doc`, or InvalidArgument naming it.
absl::StatusOr<std::string> StringAt(const json& doc, std::initializer_list<const char*> path) {
  const json* node = &doc;
  std::string name;
  for (const char* key : path) {
    name += name.empty() ? key : std::string(".") + key;
    if (!node->is_object() || !node->contains(key)) {
      return absl::InvalidArgumentError("payload has no " + name);
    }
    node = &(*node)[key];
  }
  if (node->is_null()) return std::string();
  if (!node->is_string()) return absl::InvalidArgumentError(name + " is not a string");
  return node->get<std::string>();
}

absl::StatusOr<int64_t> NumberAt(const json& doc, const char* outer, const char* key) {
  const json* node = outer == nullptr ? &doc : (doc.contains(outer) ? &doc[outer] : nullptr);
  if (node == nullptr || !node->is_object() || !node->contains(key) ||
      !(*node)[key].is_number_integer()) {
    return absl::InvalidArgumentError(std::string("payload has no integer ") +
                                      (outer ? std::string(outer) + "." : "") + key);
  }
  return (*node)[key].get<int64_t>();
}

absl::Status ReadPush(const json& doc, WebhookEvent& event) {
  absl::StatusOr<std::string> ref = StringAt(doc, {"ref"});
  if (!ref.ok()) return ref.status();
  absl::StatusOr<std::string> after = StringAt(doc, {"after"});
  if (!after.ok()) return after.status();
  event.ref = *ref;
  event.after = *after;
  return absl::OkStatus();
}

PullRequestAction GithubAction(const std::string& action, bool merged) {
  if (action == "opened") return PullRequestAction::kOpened;
  if (action == "synchronize" || action == "synchronized") return PullRequestAction::kUpdated;
  if (action == "reopened") return PullRequestAction::kReopened;
  if (action == "closed") return merged ? PullRequestAction::kMerged : PullRequestAction::kClosed;
  return PullRequestAction::kOther;
}

// GitHub and Gitea share the pull_request payload's shape.
absl::Status ReadGithubPullRequest(const json& doc, WebhookEvent& event) {
  absl::StatusOr<int64_t> number = NumberAt(doc, nullptr, "number");
  if (!number.ok()) return number.status();
  absl::StatusOr<std::string> action = StringAt(doc, {"action"});
  if (!action.ok()) return action.status();
  absl::StatusOr<std::string> head = StringAt(doc, {"pull_request", "head", "sha"});
  if (!head.ok()) return head.status();
  absl::StatusOr<std::string> base = StringAt(doc, {"pull_request", "base", "ref"});
  if (!base.ok()) return base.status();
  const json& pr = doc["pull_request"];
  const bool merged =
      pr.contains("merged") && pr["merged"].is_boolean() && pr["merged"].get<bool>();
  absl::StatusOr<std::string> merge_commit = StringAt(doc, {"pull_request", "merge_commit_sha"});
  event.number = *number;
  event.action = GithubAction(*action, merged);
  event.head_sha = *head;
  event.base_branch = *base;
  if (merged && merge_commit.ok()) event.merge_commit = *merge_commit;
  return absl::OkStatus();
}

PullRequestAction GitlabAction(const std::string& action) {
  if (action == "open") return PullRequestAction::kOpened;
  if (action == "update") return PullRequestAction::kUpdated;
  if (action == "reopen") return PullRequestAction::kReopened;
  if (action == "close") return PullRequestAction::kClosed;
  if (action == "merge") return PullRequestAction::kMerged;
  return PullRequestAction::kOther;
}

absl::Status ReadGitlabMergeRequest(const json& doc, WebhookEvent& event) {
  absl::StatusOr<int64_t> iid = NumberAt(doc, "object_attributes", "iid");
  if (!iid.ok()) return iid.status();
  absl::StatusOr<std::string> action = StringAt(doc, {"object_attributes", "action"});
  if (!action.ok()) return action.status();
  absl::StatusOr<std::string> head = StringAt(doc, {"object_attributes", "last_commit", "id"});
  if (!head.ok()) return head.status();
  absl::StatusOr<std::string> base = StringAt(doc, {"object_attributes", "target_branch"});
  if (!base.ok()) return base.status();
  absl::StatusOr<std::string> merge_commit =
      StringAt(doc, {"object_attributes", "merge_commit_sha"});
  event.number = *iid;
  event.action = GitlabAction(*action);
  event.head_sha = *head;
  event.base_branch = *base;
  if (event.action == PullRequestAction::kMerged && merge_commit.ok()) {
    event.merge_commit = *merge_commit;
  }
  return absl::OkStatus();
}

// {"ref": "refs/heads/main"} or {}: a generic sender may not know which branch moved.
absl::Status ReadGenericPush(const json& doc, WebhookEvent& event) {
  if (!doc.contains("ref")) return absl::OkStatus();
  absl::StatusOr<std::string> ref = StringAt(doc, {"ref"});
  if (!ref.ok()) return ref.status();
  event.ref = *ref;
  return absl::OkStatus();
}

WebhookKind KindOf(Forge forge, const std::string& event) {
  if (forge == Forge::kGeneric) return WebhookKind::kPush;
  if (forge == Forge::kGitlab) {
    if (event == "Push Hook") return WebhookKind::kPush;
    if (event == "Merge Request Hook") return WebhookKind::kPullRequest;
    return WebhookKind::kUnhandled;
  }
  if (event == "push") return WebhookKind::kPush;
  if (event == "pull_request") return WebhookKind::kPullRequest;
  if (event == "ping") return WebhookKind::kPing;
  return WebhookKind::kUnhandled;
}

}  // namespace

const char* ForgeName(Forge forge) {
  switch (forge) {
    case Forge::kGithub:
      return "github";
    case Forge::kGitlab:
      return "gitlab";
    case Forge::kGitea:
      return "gitea";
    case Forge::kGeneric:
      return "generic";
  }
  return "unknown";
}

std::optional<Forge> ForgeFromName(std::string_view name) {
  for (Forge forge : {Forge::kGithub, Forge::kGitlab, Forge::kGitea}) {
    if (name == ForgeName(forge)) return forge;
  }
  return std::nullopt;
}

const char* PullRequestActionName(PullRequestAction action) {
  switch (action) {
    case PullRequestAction::kOpened:
      return "opened";
    case PullRequestAction::kUpdated:
      return "updated";
    case PullRequestAction::kReopened:
      return "reopened";
    case PullRequestAction::kClosed:
      return "closed";
    case PullRequestAction::kMerged:
      return "merged";
    case PullRequestAction::kOther:
      return "other";
  }
  return "other";
}

absl::Status VerifyWebhookSignature(Forge forge, std::string_view secret,
                                    const WebhookHeaders& headers, std::string_view body) {
  if (forge == Forge::kGitlab) {
    if (headers.token.empty()) return Unauthenticated("no X-Gitlab-Token");
    // Compare digests so the time taken says nothing about the secret's length either.
    if (!ConstantTimeEquals(HmacSha256Hex("gitlab-token", headers.token),
                            HmacSha256Hex("gitlab-token", secret))) {
      return Unauthenticated("wrong X-Gitlab-Token");
    }
    return absl::OkStatus();
  }
  std::string_view given = headers.signature;
  if (given.empty()) return Unauthenticated("no signature header");
  if (forge == Forge::kGithub || forge == Forge::kGeneric || given.starts_with("sha256=")) {
    if (!given.starts_with("sha256=")) return Unauthenticated("signature is not sha256=<hex>");
    given.remove_prefix(7);
  }
  if (!ConstantTimeEquals(given, HmacSha256Hex(secret, body))) {
    return Unauthenticated("signature does not match the body");
  }
  return absl::OkStatus();
}

absl::StatusOr<WebhookEvent> ParseWebhook(Forge forge, const WebhookHeaders& headers,
                                          std::string_view body) {
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return absl::InvalidArgumentError("payload is not a JSON object");
  WebhookEvent event;
  event.forge = forge;
  event.event = headers.event;
  event.delivery =
      headers.delivery.empty() ? "sha256:" + HmacSha256Hex("delivery", body) : headers.delivery;
  event.kind = KindOf(forge, headers.event);
  absl::Status read = absl::OkStatus();
  if (forge == Forge::kGeneric) {
    read = ReadGenericPush(doc, event);
  } else if (event.kind == WebhookKind::kPush) {
    read = ReadPush(doc, event);
  } else if (event.kind == WebhookKind::kPullRequest) {
    read = forge == Forge::kGitlab ? ReadGitlabMergeRequest(doc, event)
                                   : ReadGithubPullRequest(doc, event);
  }
  if (!read.ok()) return read;
  return event;
}

}  // namespace tr::reconciler::forge

namespace tr::reconciler::forge {

bool IsRelevant(const WebhookEvent& event, const std::string& branch) {
  switch (event.kind) {
    case WebhookKind::kPush:
      return event.ref == "refs/heads/" + branch ||
             (event.forge == Forge::kGeneric && event.ref.empty());
    case WebhookKind::kPullRequest:
      return event.base_branch == branch && event.action != PullRequestAction::kOther;
    case WebhookKind::kPing:
    case WebhookKind::kUnhandled:
      return false;
  }
  return false;
}

}  // namespace tr::reconciler::forge
