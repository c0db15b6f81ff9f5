// GitHub's dialect (github.com and GitHub Enterprise). Gitea and Forgejo copy most of it (the
// push and pull_request payloads, /repos/<owner>/<name> paths, issue comments, commit statuses),
// so GiteaDialect (gitea.h) derives from it and overrides what differs.
//
// Immutable; thread-safe.
#pragma once

#include "reconciler/clients/forge/forge_dialect.h"

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

  size_t PullsPageSize() const override { return 100; }
  // `head=<owner>:<branch>`: GitHub filters by branch.
  ForgeRequest PullsFromBranchRequest(const std::string& repository, const std::string& head_branch,
                                      int page) const override;
  // Those whose `head.ref` is the branch and whose head repository is the base repository (a
  // fork's, or one whose fork is gone, is left out). Merged: `merged_at` is set.
  absl::StatusOr<ForgePullPage> ParsePulls(std::string_view json,
                                           const std::string& head_branch) const override;
  absl::StatusOr<ForgePull> ParsePull(std::string_view json) const override;
  // Without labels: GitHub's create takes none (AddLabelsRequest).
  ForgeRequest CreatePullRequest(const std::string& repository, const PullDraft& draft,
                                 const std::vector<int64_t>& label_ids) const override;
  // The pull request's issue's labels; nullopt when there are none to add.
  std::optional<ForgeRequest> AddLabelsRequest(
      const std::string& repository, int64_t number,
      const std::vector<std::string>& labels) const override;
  ForgeRequest EditPullRequest(const std::string& repository, int64_t number,
                               const std::string& title, const std::string& body) const override;

  std::string HeadRef(int64_t number) const override;  // refs/pull/<n>/head
  std::string TreeUrl(const std::string& web, const std::string& branch,
                      const std::string& path) const override;  // <web>/tree/<branch>/<path>
};

}  // namespace tr::reconciler::forge
