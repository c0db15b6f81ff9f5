// The forge's REST API as the reconciler uses it: finding, creating and editing a pull
// request's comment, setting a commit status, finding the pull request a merge commit came
// from, and finding, opening and editing pull requests of a branch (release proposals).
// HttpForgeClient speaks every forge with an API through its dialect (forge_dialect.h; base URL
// configurable for GitHub Enterprise and self-hosted instances) and keeps to GitHub's rate
// limits, the strictest:
//  - on 403/429 it waits `retry-after` (as base/http_outcome.h reads it), else until
//    `x-ratelimit-reset` when `x-ratelimit-remaining` is 0, else 60 s doubling, and gives up
//    after `max_attempts`;
//  - on no answer or a 5xx it retries after JitteredBackoff (base/env.h) of 1 s doubling to 32 s;
//  - after an answer with `x-ratelimit-remaining: 0` it sends nothing until the reset;
//  - it sends at most `content_requests_per_minute` content-creating requests a minute (every
//    POST, PATCH and PUT: comments, statuses, pull requests and their labels).
// Every wait a server asks for is clamped to kMaxRateLimitWait (a reset in the past waits
// nothing), so a broken or hostile answer cannot park reporting for hours. An answer longer
// than `max_answer_bytes` is refused (ResourceExhausted) without being read further.
// The token is sent in a header and never logged; the daemon refuses an http:// API URL
// unless --forge-allow-insecure-http (forge_flags.h).
//
// Thread-safe: calls may come from any thread; waits are cancelled by the caller's stop token.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "base/mutex.h"
#include "reconciler/clients/forge/forge_dialect.h"

namespace tr::reconciler::forge {

class ForgeApi {
 public:
  virtual ~ForgeApi() = default;
  // The first comment of pull request `number` whose body contains `marker`; nullopt when none.
  virtual absl::StatusOr<std::optional<ForgeComment>> FindComment(int64_t number,
                                                                  std::string_view marker,
                                                                  std::stop_token stop) = 0;
  // The new comment's id.
  virtual absl::StatusOr<int64_t> CreateComment(int64_t number, const std::string& body,
                                                std::stop_token stop) = 0;
  virtual absl::Status EditComment(int64_t number, int64_t comment_id, const std::string& body,
                                   std::stop_token stop) = 0;
  virtual absl::Status SetCommitStatus(const CommitStatus& status, std::stop_token stop) = 0;
  // The merged pull request that `sha` belongs to; nullopt when none (or, on Gitea, unknown).
  virtual absl::StatusOr<std::optional<int64_t>> MergedPullOf(const std::string& sha,
                                                              std::stop_token stop) = 0;

  // Every pull request (open, closed or merged) whose head is `head_branch` of this repository,
  // newest first; empty when none.
  virtual absl::StatusOr<std::vector<ForgePull>> PullsFromBranch(const std::string& head_branch,
                                                                 std::stop_token stop) = 0;
  virtual absl::StatusOr<ForgePull> CreatePull(const PullDraft& draft, std::stop_token stop) = 0;
  // Replaces an open pull request's title and body.
  virtual absl::Status EditPull(int64_t number, const std::string& title, const std::string& body,
                                std::stop_token stop) = 0;
};

// Which repository on which forge: `repository` is "owner/name" (GitLab: the project path,
// "group/subgroup/project").
struct ForgeTarget {
  const ForgeApiDialect* dialect = nullptr;  // a registered dialect (FindApiDialect); never owned
  std::string repository;
};

struct ForgeClientOptions {
  ForgeTarget target;
  // "https://api.github.com", "https://ghe.example/api/v3", "https://gitlab.example/api/v4",
  // "https://gitea.example/api/v1".
  std::string api_url;
  std::string token;
  std::chrono::milliseconds timeout{10'000};  // per request: connect, read, write
  int max_attempts = 4;
  int content_requests_per_minute = 40;  // GitHub allows 80; keep well under
  size_t max_answer_bytes = 8 << 20;     // a page of 100 comments is well under 1 MiB
};

// The longest wait any rate-limit header can cause.
inline constexpr std::chrono::minutes kMaxRateLimitWait{15};

// How long to wait before retrying a rate-limited answer (403 or 429) with these
// (lower-cased) headers, at retry number `retry` (1 for the first); nullopt when the answer is
// not a rate limit. See the file comment for the rules.
std::optional<std::chrono::milliseconds> RateLimitDelay(
    int status, const std::map<std::string, std::string>& headers, std::string_view body,
    std::chrono::system_clock::time_point now, int retry);

// Until when nothing is sent after an answer with these (lower-cased) headers: the
// `x-ratelimit-reset` time when `x-ratelimit-remaining` is 0, at most kMaxRateLimitWait after
// `now`; nullopt when the answer sets no such limit or the reset is not after `now`.
std::optional<std::chrono::system_clock::time_point> RateLimitedUntil(
    const std::map<std::string, std::string>& headers, std::chrono::system_clock::time_point now);

class HttpForgeClient final : public ForgeApi {
 public:
  // InvalidArgument when `api_url` is not http(s)://host[:port][/path], the token or the
  // repository is empty, or there is no dialect.
  static absl::StatusOr<std::unique_ptr<HttpForgeClient>> Create(ForgeClientOptions options,
                                                                 Env& env);

  absl::StatusOr<std::optional<ForgeComment>> FindComment(int64_t number, std::string_view marker,
                                                          std::stop_token stop) override;
  absl::StatusOr<int64_t> CreateComment(int64_t number, const std::string& body,
                                        std::stop_token stop) override;
  absl::Status EditComment(int64_t number, int64_t comment_id, const std::string& body,
                           std::stop_token stop) override;
  absl::Status SetCommitStatus(const CommitStatus& status, std::stop_token stop) override;
  absl::StatusOr<std::optional<int64_t>> MergedPullOf(const std::string& sha,
                                                      std::stop_token stop) override;
  // Reads at most kMaxPullPages pages of the forge's list (on Gitea, which cannot filter by
  // branch, the 5,000 newest pull requests of the repository).
  absl::StatusOr<std::vector<ForgePull>> PullsFromBranch(const std::string& head_branch,
                                                         std::stop_token stop) override;
  // Opens the pull request with its labels: on GitHub added by a second request after it is
  // opened (an error then says the pull request was opened: find it with PullsFromBranch); on
  // GitLab by name (GitLab creates missing ones); on Gitea by id, a name the repository has no
  // label of being left out. A pull request already open from the branch into the base makes
  // the forge refuse: InvalidArgument on GitHub (422), Aborted on GitLab and Gitea (409).
  absl::StatusOr<ForgePull> CreatePull(const PullDraft& draft, std::stop_token stop) override;
  absl::Status EditPull(int64_t number, const std::string& title, const std::string& body,
                        std::stop_token stop) override;

  // The most pages of pull requests or labels read.
  static constexpr int kMaxPullPages = 100;

 private:
  HttpForgeClient(ForgeClientOptions options, std::string origin, std::string prefix, Env& env);

  // Sends `request` with retries; the answer's body on 2xx. NotFound (404), Unauthenticated
  // (401), PermissionDenied (a 403 that is no rate limit), InvalidArgument (other 4xx),
  // Unavailable (network, 5xx, or rate-limited past max_attempts), Cancelled when stopped.
  absl::StatusOr<std::string> Send(const ForgeRequest& request, std::stop_token stop);
  // The ids of the labels named `names` that the repository has, in `names`' order.
  absl::StatusOr<std::vector<int64_t>> LabelIds(const std::vector<std::string>& names,
                                                std::stop_token stop);
  // Waits out a known rate-limit reset and the content-creating pace; false when stopped.
  bool Pace(bool content_creating, std::stop_token stop);

  const ForgeClientOptions options_;
  const std::string origin_;  // scheme://host:port
  const std::string prefix_;  // the base URL's path, "" or "/api/v4"
  Env& env_;
  Mutex mu_;  // held only while deciding a wait, never across a request
  std::chrono::system_clock::time_point blocked_until_ ABSL_GUARDED_BY(mu_);
  std::deque<std::chrono::system_clock::time_point> recent_content_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler::forge
