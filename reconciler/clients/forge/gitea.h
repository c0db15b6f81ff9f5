// Gitea's dialect (self-hosted, API /api/v1), and with other header names Forgejo's
// (forgejo.cc): GitHub's payloads, paths, comments and statuses (GithubDialect), with Gitea's
// headers, an unprefixed hex signature, `Authorization: token`, pages of 50 comments, no call
// for the pull requests of a commit (its merged webhook says), no public default API, its own
// web paths (`/src/branch/`), no filter of pull requests by head branch, and labels applied by
// id.
//
// Immutable; thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reconciler/clients/forge/github.h"

namespace tr::reconciler::forge {

class GiteaDialect : public GithubDialect {
 public:
  // The header names to read, each list tried in order (the first one sent wins).
  struct HeaderNames {
    std::vector<const char*> event;
    std::vector<const char*> delivery;
    std::vector<const char*> signature;
  };
  GiteaDialect(std::string name, HeaderNames headers)
      : name_(std::move(name)), headers_(std::move(headers)) {}

  std::string_view name() const override { return name_; }
  WebhookHeaders PickHeaders(const HeaderLookup& header) const override;
  // `<hex HMAC-SHA256>`, or `sha256=<hex>` as in X-Hub-Signature-256.
  absl::Status VerifySignature(std::string_view secret, const WebhookHeaders& headers,
                               std::string_view body) const override;

  std::optional<std::string> DefaultApiUrl() const override { return std::nullopt; }
  HeaderList AuthHeaders(const std::string& token) const override;
  size_t CommentsPageSize() const override { return 50; }
  ForgeRequest ListCommentsRequest(const std::string& repository, int64_t number,
                                   int page) const override;
  std::optional<ForgeRequest> PullsOfCommitRequest(const std::string& repository,
                                                   const std::string& sha) const override;
  // Pages of 50 (Gitea's default cap, MAX_RESPONSE_ITEMS).
  size_t PullsPageSize() const override { return 50; }
  // Every pull request, `state=all`: Gitea's list cannot filter by head branch (ParsePulls
  // does), and its call by base and head needs the base and answers one pull request only.
  ForgeRequest PullsFromBranchRequest(const std::string& repository, const std::string& head_branch,
                                      int page) const override;
  std::optional<ForgeRequest> ListLabelsRequest(const std::string& repository,
                                                int page) const override;
  size_t LabelsPageSize() const override { return 50; }
  absl::StatusOr<std::vector<ForgeLabel>> ParseLabels(std::string_view json) const override;
  // Labels by id only (CreatePullRequestOption.labels is a list of ids).
  ForgeRequest CreatePullRequest(const std::string& repository, const PullDraft& draft,
                                 const std::vector<int64_t>& label_ids) const override;
  std::optional<ForgeRequest> AddLabelsRequest(
      const std::string& repository, int64_t number,
      const std::vector<std::string>& labels) const override;  // nullopt: taken on creation
  std::string TreeUrl(const std::string& web, const std::string& branch,
                      const std::string& path) const override;  // <web>/src/branch/<branch>/<path>

 private:
  const std::string name_;
  const HeaderNames headers_;
};

}  // namespace tr::reconciler::forge
