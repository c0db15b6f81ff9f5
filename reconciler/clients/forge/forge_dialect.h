// What differs between forges, each forge in one file: how it sends webhooks (headers,
// signature, payloads) and, for a forge with a REST API, how its requests are spelled, where a
// pull request's head is fetched from and where its web pages are. Everything else (the
// listener, the API client, the pull request flow) is written once and asks the dialect.
//
// The dialects: github.cc, gitlab.cc, gitea.cc, forgejo.cc (Gitea's with Forgejo's headers)
// and generic.cc (any Git server whose hook script signs a plain body: webhooks only). A new
// forge is one more file and its line in dialects.cc.
//
// Dialects are immutable singletons; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "reconciler/clients/forge/forge_requests.h"
#include "reconciler/clients/forge/webhook_event.h"

namespace tr::reconciler::forge {

class ForgeApiDialect;

// How a Git server sends webhooks.
class ForgeDialect {
 public:
  virtual ~ForgeDialect() = default;

  // "github": the webhook path /hooks/<name> and, with an API, the --forge value.
  virtual std::string_view name() const = 0;
  // The forge's REST API; nullptr when it has none (generic), so it cannot be a --forge.
  virtual const ForgeApiDialect* api() const { return nullptr; }

  // The headers of a delivery that matter, read through `header`.
  virtual WebhookHeaders PickHeaders(const HeaderLookup& header) const = 0;
  // OK when `body` was sent by someone holding `secret`, every comparison in constant time;
  // Unauthenticated when the signature or token is missing or wrong.
  virtual absl::Status VerifySignature(std::string_view secret, const WebhookHeaders& headers,
                                       std::string_view body) const = 0;
  // The kind of delivery the event header names.
  virtual WebhookKind KindOf(std::string_view event) const = 0;
  // Reads the fields of a kPush or kPullRequest delivery (`event.kind` is set) from its JSON
  // object `payload` into `event`. InvalidArgument naming a missing or mistyped field.
  virtual absl::Status ReadPayload(const nlohmann::json& payload, WebhookEvent& event) const = 0;
};

// A forge whose REST API the reconciler reports to (pull request comments, commit statuses) and
// opens pull requests on.
// `repository` is "owner/name" (GitLab: the project path, "group/subgroup/project"); paths are
// below the API base URL.
class ForgeApiDialect : public ForgeDialect {
 public:
  const ForgeApiDialect* api() const override { return this; }

  // The API base URL when none is configured; nullopt for a forge that is self-hosted only.
  virtual std::optional<std::string> DefaultApiUrl() const = 0;
  // The headers every request carries: the token, and what the API's version needs.
  virtual HeaderList AuthHeaders(const std::string& token) const = 0;
  // How many comments a full page holds: a shorter page is the last.
  virtual size_t CommentsPageSize() const = 0;
  // One page (CommentsPageSize) of a pull request's comments, oldest first.
  virtual ForgeRequest ListCommentsRequest(const std::string& repository, int64_t number,
                                           int page) const = 0;
  virtual ForgeRequest CreateCommentRequest(const std::string& repository, int64_t number,
                                            const std::string& body) const = 0;
  virtual ForgeRequest EditCommentRequest(const std::string& repository, int64_t number,
                                          int64_t comment_id, const std::string& body) const = 0;
  virtual ForgeRequest CommitStatusRequest(const std::string& repository,
                                           const CommitStatus& status) const = 0;
  // The pull requests a commit belongs to; nullopt when the forge has no such call (the merged
  // webhook is then the only way to know).
  virtual std::optional<ForgeRequest> PullsOfCommitRequest(const std::string& repository,
                                                           const std::string& sha) const = 0;
  // The number of the merged pull request in PullsOfCommitRequest's answer; nullopt when none
  // is. InvalidArgument when the answer is not a JSON list.
  virtual absl::StatusOr<std::optional<int64_t>> ParsePullOfCommit(std::string_view json) const = 0;

  // Pull requests. Answers are untrusted: a parser's InvalidArgument names the missing or
  // mistyped field.
  //
  // How many pull requests a full page of PullsFromBranchRequest holds: a shorter page is the
  // last.
  virtual size_t PullsPageSize() const = 0;
  // One page of the pull requests (every state) of `repository`, narrowed by the forge to those
  // from `head_branch` where it can filter so.
  virtual ForgeRequest PullsFromBranchRequest(const std::string& repository,
                                              const std::string& head_branch, int page) const = 0;
  // The pull requests of one PullsFromBranchRequest answer whose head is `head_branch` of the
  // repository itself (not of a fork), in the answer's order, and how many entries it held.
  // InvalidArgument when the answer is not a list of pull requests.
  virtual absl::StatusOr<ForgePullPage> ParsePulls(std::string_view json,
                                                   const std::string& head_branch) const = 0;
  // The pull request of a CreatePullRequest or EditPullRequest answer.
  virtual absl::StatusOr<ForgePull> ParsePull(std::string_view json) const = 0;
  // One page of the repository's labels, for a forge whose CreatePullRequest takes labels by
  // id; nullopt (the default) for one that takes their names.
  virtual std::optional<ForgeRequest> ListLabelsRequest(const std::string& /*repository*/,
                                                        int /*page*/) const {
    return std::nullopt;
  }
  // How many labels a full page of ListLabelsRequest holds: a shorter page is the last.
  virtual size_t LabelsPageSize() const { return 100; }
  // The labels of one ListLabelsRequest answer.
  virtual absl::StatusOr<std::vector<ForgeLabel>> ParseLabels(std::string_view /*json*/) const {
    return absl::UnimplementedError("this forge takes label names");
  }
  // Opens `draft`. `label_ids`: the ids of its labels when the forge takes ids
  // (ListLabelsRequest), names without a label left out; else empty, and the dialect spells
  // `draft.labels` itself.
  virtual ForgeRequest CreatePullRequest(const std::string& repository, const PullDraft& draft,
                                         const std::vector<int64_t>& label_ids) const = 0;
  // Adds `labels` to the pull request just opened, for a forge that cannot take them with
  // CreatePullRequest; nullopt when CreatePullRequest took them.
  virtual std::optional<ForgeRequest> AddLabelsRequest(
      const std::string& repository, int64_t number,
      const std::vector<std::string>& labels) const = 0;
  // Replaces the title and body of pull request `number`.
  virtual ForgeRequest EditPullRequest(const std::string& repository, int64_t number,
                                       const std::string& title, const std::string& body) const = 0;

  // The ref a pull request's head is fetched from: "refs/pull/7/head".
  virtual std::string HeadRef(int64_t number) const = 0;
  // The web page of folder `path` on `branch`, `web` being the repository's web address.
  virtual std::string TreeUrl(const std::string& web, const std::string& branch,
                              const std::string& path) const = 0;
};

// Every dialect, each once, in a fixed order: the listener serves /hooks/<name> for each.
const std::vector<const ForgeDialect*>& AllDialects();
// The dialect named `name`; nullptr for any other name.
const ForgeDialect* FindDialect(std::string_view name);
// The dialect named `name` if it has an API (a --forge); nullptr otherwise ("generic" too).
const ForgeApiDialect* FindApiDialect(std::string_view name);
// The names of the dialects (only those with an API when `api_only`), joined by `separator`:
// "github|gitlab|gitea|forgejo" for --help.
std::string DialectNames(std::string_view separator, bool api_only);

}  // namespace tr::reconciler::forge
