#include "reconciler/forge/forge_requests.h"

#include "absl/strings/str_cat.h"
#include "base/percent_encoding.h"

namespace tr::reconciler::forge {
namespace {

using nlohmann::json;

// The repository's prefix: "/repos/owner/name" (GitHub, Gitea), "/projects/group%2Fname".
std::string RepoPath(const ForgeTarget& target) {
  if (target.forge == Forge::kGitlab) return "/projects/" + PercentEncode(target.repository);
  return "/repos/" + target.repository;
}

// Where a pull request's comments are: GitHub and Gitea treat a PR as an issue.
std::string CommentsPath(const ForgeTarget& target, int64_t number) {
  if (target.forge == Forge::kGitlab) {
    return absl::StrCat(RepoPath(target), "/merge_requests/", number, "/notes");
  }
  return absl::StrCat(RepoPath(target), "/issues/", number, "/comments");
}

// At most `limit` bytes of `text`, not cutting a UTF-8 sequence.
std::string CutUtf8(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string StateOnForge(Forge forge, CommitState state) {
  if (forge == Forge::kGitlab && (state == CommitState::kFailure || state == CommitState::kError)) {
    return "failed";  // GitLab: pending|running|success|failed|canceled
  }
  return CommitStateName(state);
}

absl::StatusOr<json> ParseJson(std::string_view text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return absl::InvalidArgumentError("forge answer is not JSON");
  return value;
}

}  // namespace

const char* CommitStateName(CommitState state) {
  switch (state) {
    case CommitState::kPending:
      return "pending";
    case CommitState::kSuccess:
      return "success";
    case CommitState::kFailure:
      return "failure";
    case CommitState::kError:
      return "error";
  }
  return "error";
}

std::vector<std::pair<std::string, std::string>> AuthHeaders(Forge forge,
                                                             const std::string& token) {
  switch (forge) {
    case Forge::kGithub:
      return {{"Authorization", "Bearer " + token},
              {"Accept", "application/vnd.github+json"},
              {"X-GitHub-Api-Version", "2022-11-28"}};
    case Forge::kGitlab:
      return {{"PRIVATE-TOKEN", token}, {"Accept", "application/json"}};
    case Forge::kGitea:
      return {{"Authorization", "token " + token}, {"Accept", "application/json"}};
    case Forge::kGeneric:
      break;  // no API: never a --forge
  }
  return {};
}

size_t CommentsPageSize(Forge forge) { return forge == Forge::kGitea ? 50 : 100; }

ForgeRequest ListCommentsRequest(const ForgeTarget& target, int64_t number, int page) {
  std::string query = absl::StrCat("?per_page=100&page=", page);
  if (target.forge == Forge::kGitlab) query += "&sort=asc&order_by=created_at";
  if (target.forge == Forge::kGitea) query = absl::StrCat("?limit=50&page=", page);
  return {"GET", CommentsPath(target, number) + query, std::nullopt};
}

ForgeRequest CreateCommentRequest(const ForgeTarget& target, int64_t number,
                                  const std::string& body) {
  return {"POST", CommentsPath(target, number), json{{"body", body}}};
}

ForgeRequest EditCommentRequest(const ForgeTarget& target, int64_t number, int64_t comment_id,
                                const std::string& body) {
  if (target.forge == Forge::kGitlab) {
    return {"PUT", absl::StrCat(CommentsPath(target, number), "/", comment_id),
            json{{"body", body}}};
  }
  return {"PATCH", absl::StrCat(RepoPath(target), "/issues/comments/", comment_id),
          json{{"body", body}}};
}

ForgeRequest CommitStatusRequest(const ForgeTarget& target, const CommitStatus& status) {
  json body{{"state", StateOnForge(target.forge, status.state)},
            {"description", CutUtf8(status.description, 140)}};
  body[target.forge == Forge::kGitlab ? "name" : "context"] = status.context;
  if (!status.target_url.empty()) body["target_url"] = status.target_url;
  return {"POST", absl::StrCat(RepoPath(target), "/statuses/", status.sha), std::move(body)};
}

std::optional<ForgeRequest> PullsOfCommitRequest(const ForgeTarget& target,
                                                 const std::string& sha) {
  switch (target.forge) {
    case Forge::kGithub:
      return ForgeRequest{"GET", absl::StrCat(RepoPath(target), "/commits/", sha, "/pulls"),
                          std::nullopt};
    case Forge::kGitlab:
      return ForgeRequest{
          "GET", absl::StrCat(RepoPath(target), "/repository/commits/", sha, "/merge_requests"),
          std::nullopt};
    case Forge::kGitea:  // finds the merged pull request from its webhook only
    case Forge::kGeneric:
      return std::nullopt;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<ForgeComment>> ParseComments(std::string_view text) {
  absl::StatusOr<json> value = ParseJson(text);
  if (!value.ok()) return value.status();
  if (!value->is_array()) return absl::InvalidArgumentError("forge comments: not a list");
  std::vector<ForgeComment> comments;
  for (const json& item : *value) {
    if (!item.is_object() || !item.contains("id") || !item["id"].is_number_integer() ||
        !item.contains("body") || !item["body"].is_string()) {
      return absl::InvalidArgumentError("forge comments: an entry lacks id or body");
    }
    comments.push_back({item["id"].get<int64_t>(), item["body"].get<std::string>()});
  }
  return comments;
}

absl::StatusOr<int64_t> ParseCreatedId(std::string_view text) {
  absl::StatusOr<json> value = ParseJson(text);
  if (!value.ok()) return value.status();
  if (!value->is_object() || !value->contains("id") || !(*value)["id"].is_number_integer()) {
    return absl::InvalidArgumentError("forge answer has no comment id");
  }
  return (*value)["id"].get<int64_t>();
}

absl::StatusOr<std::optional<int64_t>> ParsePullOfCommit(Forge forge, std::string_view text) {
  absl::StatusOr<json> value = ParseJson(text);
  if (!value.ok()) return value.status();
  if (!value->is_array()) return absl::InvalidArgumentError("forge pulls of commit: not a list");
  for (const json& item : *value) {
    if (!item.is_object()) continue;
    const bool merged = forge == Forge::kGitlab
                            ? item.value("state", "") == "merged"
                            : item.contains("merged_at") && item["merged_at"].is_string();
    const char* key = forge == Forge::kGitlab ? "iid" : "number";
    if (merged && item.contains(key) && item[key].is_number_integer()) {
      return std::optional<int64_t>(item[key].get<int64_t>());
    }
  }
  return std::optional<int64_t>();
}

}  // namespace tr::reconciler::forge
