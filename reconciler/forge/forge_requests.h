// The REST calls the reconciler makes on a forge, spelled per forge: GitHub (and GitHub
// Enterprise), GitLab (`/api/v4`) and Gitea/Forgejo (`/api/v1`). Only the shapes live here —
// method, path below the API base URL, auth headers, JSON body and how to read the answer —
// so they can be checked without a network; ForgeClient sends them.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "reconciler/forge/webhook_event.h"

namespace tr::reconciler::forge {

// Which repository on which forge: `repository` is "owner/name" (GitLab: the project path,
// "group/subgroup/project").
struct ForgeTarget {
  Forge forge = Forge::kGithub;
  std::string repository;
};

enum class CommitState { kPending, kSuccess, kFailure, kError };
const char* CommitStateName(CommitState state);  // "pending", ...

struct CommitStatus {
  std::string sha;
  std::string context;  // "talos-reconciler/plan"
  CommitState state = CommitState::kPending;
  std::string description;  // cut to 140 characters, GitHub's limit
  std::string target_url;   // empty: none
};

struct ForgeRequest {
  std::string method;  // "GET", "POST", "PATCH", "PUT"
  std::string path;    // below the API base URL, query included
  std::optional<nlohmann::json> body;
  // GitHub's secondary limits count content-creating requests (POST/PATCH/PUT/DELETE).
  bool content_creating() const { return method != "GET"; }
};

// The headers every request carries: the token (GitHub `Authorization: Bearer`, GitLab
// `PRIVATE-TOKEN`, Gitea `Authorization: token`), plus GitHub's Accept and API version.
std::vector<std::pair<std::string, std::string>> AuthHeaders(Forge forge, const std::string& token);

// How many comments a full page holds: a shorter page is the last.
size_t CommentsPageSize(Forge forge);
// One page (CommentsPageSize) of a pull request's comments, oldest first. GitLab: the merge
// request's notes.
ForgeRequest ListCommentsRequest(const ForgeTarget& target, int64_t number, int page);
ForgeRequest CreateCommentRequest(const ForgeTarget& target, int64_t number,
                                  const std::string& body);
ForgeRequest EditCommentRequest(const ForgeTarget& target, int64_t number, int64_t comment_id,
                                const std::string& body);
ForgeRequest CommitStatusRequest(const ForgeTarget& target, const CommitStatus& status);
// The pull requests a commit belongs to (GitHub, GitLab). Gitea has no such call: nullopt.
std::optional<ForgeRequest> PullsOfCommitRequest(const ForgeTarget& target, const std::string& sha);

struct ForgeComment {
  int64_t id = 0;
  std::string body;
};
// A page of comments as ListCommentsRequest's answer. InvalidArgument when it is not a list
// of objects with a numeric `id` and a string `body`.
absl::StatusOr<std::vector<ForgeComment>> ParseComments(std::string_view json);
// The `id` of a created comment. InvalidArgument when absent.
absl::StatusOr<int64_t> ParseCreatedId(std::string_view json);
// The number of the merged pull request among PullsOfCommitRequest's answer (GitHub `number`
// with `merged_at` set, GitLab `iid` with state "merged"); nullopt when none is.
absl::StatusOr<std::optional<int64_t>> ParsePullOfCommit(Forge forge, std::string_view json);

}  // namespace tr::reconciler::forge
