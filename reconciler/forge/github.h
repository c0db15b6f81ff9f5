// GitHub's dialect (github.com and GitHub Enterprise). Gitea and Forgejo copy most of it (the
// push and pull_request payloads, /repos/<owner>/<name> paths, issue comments, commit statuses),
// so GiteaDialect (gitea.h) derives from it and overrides what differs.
//
// Immutable; thread-safe.
#pragma once

#include "reconciler/forge/forge_dialect.h"

namespace tr::reconciler::forge {

class GithubDialect : public ForgeApiDialect {
 public:
  std::string_view name() const override { return "github"; }

  // X-GitHub-Event, X-GitHub-Delivery, X-Hub-Signature-256 (the legacy SHA-1 header alone is
  // not enough).
  WebhookHeaders PickHeaders(const HeaderLookup& header) const override;
  // `sha256=<hex HMAC-SHA256>`.
  absl::Status VerifySignature(std::string_view secret, const WebhookHeaders& headers,
                               std::string_view body) const override;
  WebhookKind KindOf(std::string_view event) const override;  // push, pull_request, ping
  absl::Status ReadPayload(const nlohmann::json& payload, WebhookEvent& event) const override;

  std::optional<std::string> DefaultApiUrl() const override;  // https://api.github.com
  HeaderList AuthHeaders(const std::string& token) const override;
  size_t CommentsPageSize() const override { return 100; }
  ForgeRequest ListCommentsRequest(const std::string& repository, int64_t number,
                                   int page) const override;
  // A pull request's comments are its issue's.
  ForgeRequest CreateCommentRequest(const std::string& repository, int64_t number,
                                    const std::string& body) const override;
  ForgeRequest EditCommentRequest(const std::string& repository, int64_t number, int64_t comment_id,
                                  const std::string& body) const override;
  ForgeRequest CommitStatusRequest(const std::string& repository,
                                   const CommitStatus& status) const override;
  std::optional<ForgeRequest> PullsOfCommitRequest(const std::string& repository,
                                                   const std::string& sha) const override;
  // The `number` of the entry with `merged_at` set.
  absl::StatusOr<std::optional<int64_t>> ParsePullOfCommit(std::string_view json) const override;
  std::string HeadRef(int64_t number) const override;  // refs/pull/<n>/head
  std::string TreeUrl(const std::string& web, const std::string& branch,
                      const std::string& path) const override;  // <web>/tree/<branch>/<path>
};

}  // namespace tr::reconciler::forge
