// The values the reconciler exchanges with a forge's REST API, whichever forge it is: a request
// (method, path below the API base URL, JSON body), a commit status, a comment, a pull request
// and its draft, a label, and the reading of the answers every forge shapes alike. How each
// forge spells a request is its dialect's (forge_dialect.h); HttpForgeClient sends them.
//
// Values and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tr::reconciler::forge {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

enum class CommitState { kPending, kSuccess, kFailure, kError };
const char* CommitStateName(CommitState state);  // "pending", ...

struct CommitStatus {
  std::string sha;
  std::string context;  // "talos-reconciler/plan"
  CommitState state = CommitState::kPending;
  std::string description;  // cut to kMaxDescriptionBytes, GitHub's limit
  std::string target_url;   // empty: none
};

// The longest commit status description sent (GitHub's limit, in characters; kept in bytes).
inline constexpr size_t kMaxDescriptionBytes = 140;

struct ForgeRequest {
  std::string method;  // "GET", "POST", "PATCH", "PUT"
  std::string path;    // below the API base URL, query included
  std::optional<nlohmann::json> body;
  // GitHub's secondary limits count content-creating requests (POST/PATCH/PUT/DELETE).
  bool content_creating() const { return method != "GET"; }
};

struct ForgeComment {
  int64_t id = 0;
  std::string body;
};

// A pull request as the forge lists it.
struct ForgePull {
  int64_t number = 0;  // GitHub/Gitea `number`, GitLab `iid`
  std::string state;   // "open", "closed" (without merge) or "merged"
  std::string title;
  std::string body;         // GitLab `description`
  std::string head_branch;  // the branch it merges from (same repository)
  std::string base_branch;
  std::string url;  // its web page (html_url / web_url)
};

// A pull request to open, from `head_branch` into `base_branch` of the same repository.
struct PullDraft {
  std::string head_branch, base_branch, title, body;
  std::vector<std::string> labels;  // names; may be empty
};

// One page of a forge's list of pull requests: those that matched, and how many entries the
// page held (a page shorter than the forge's page size is the last).
struct ForgePullPage {
  std::vector<ForgePull> pulls;
  size_t entries = 0;
};

// A label defined in a repository (Gitea names labels by id when it applies them).
struct ForgeLabel {
  int64_t id = 0;
  std::string name;
};

// A page of comments as a dialect's ListCommentsRequest answers. InvalidArgument when it is not
// a list of objects with a numeric `id` and a string `body`.
absl::StatusOr<std::vector<ForgeComment>> ParseComments(std::string_view json);
// The `id` of a created comment. InvalidArgument when absent.
absl::StatusOr<int64_t> ParseCreatedId(std::string_view json);
// A forge's answer as JSON. InvalidArgument when it is none.
absl::StatusOr<nlohmann::json> ParseAnswer(std::string_view text);

// The string at `path` ("head", "ref") of `doc`, an object of a forge's answer about `what`
// ("pull request"); "" for null when `nullable`. InvalidArgument naming `what` and the path
// when it is absent or not a string.
absl::StatusOr<std::string> AnswerString(const nlohmann::json& doc,
                                         std::initializer_list<const char*> path, bool nullable,
                                         const char* what);
// The integer at `path` of `doc`. InvalidArgument naming `what` and the path when it is absent
// or not an integer.
absl::StatusOr<int64_t> AnswerInteger(const nlohmann::json& doc,
                                      std::initializer_list<const char*> path, const char* what);

// At most `limit` bytes of `text`, not cutting a UTF-8 sequence.
std::string CutUtf8(const std::string& text, size_t limit);

}  // namespace tr::reconciler::forge
