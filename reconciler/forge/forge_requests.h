// The values the reconciler exchanges with a forge's REST API, whichever forge it is: a request
// (method, path below the API base URL, JSON body), a commit status, a comment, and the reading
// of the answers every forge shapes alike. How each forge spells a request is its dialect's
// (forge_dialect.h); HttpForgeClient sends them.
//
// Values and pure functions; thread-safe.
#pragma once

#include <cstdint>
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
// A page of comments as a dialect's ListCommentsRequest answers. InvalidArgument when it is not
// a list of objects with a numeric `id` and a string `body`.
absl::StatusOr<std::vector<ForgeComment>> ParseComments(std::string_view json);
// The `id` of a created comment. InvalidArgument when absent.
absl::StatusOr<int64_t> ParseCreatedId(std::string_view json);
// A forge's answer as JSON. InvalidArgument when it is none.
absl::StatusOr<nlohmann::json> ParseAnswer(std::string_view text);

// At most `limit` bytes of `text`, not cutting a UTF-8 sequence.
std::string CutUtf8(const std::string& text, size_t limit);

}  // namespace tr::reconciler::forge
