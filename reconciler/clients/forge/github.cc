#include "reconciler/clients/forge/github.h"

#include "absl/strings/str_cat.h"
#include "base/percent_encoding.h"
#include "reconciler/clients/forge/webhook_reading.h"

namespace tr::reconciler::forge {
namespace {

using nlohmann::json;

PullRequestAction ActionOf(const std::string& action, bool merged) {
  if (action == "opened") return PullRequestAction::kOpened;
  if (action == "synchronize" || action == "synchronized") return PullRequestAction::kUpdated;
  if (action == "reopened") return PullRequestAction::kReopened;
  if (action == "closed") return merged ? PullRequestAction::kMerged : PullRequestAction::kClosed;
  return PullRequestAction::kOther;
}

absl::Status ReadPullRequest(const json& doc, WebhookEvent& event) {
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
  event.action = ActionOf(*action, merged);
  event.head_sha = *head;
  event.base_branch = *base;
  if (merged && merge_commit.ok()) event.merge_commit = *merge_commit;
  return absl::OkStatus();
}

std::string RepoPath(const std::string& repository) { return "/repos/" + repository; }

std::string CommentsPath(const std::string& repository, int64_t number) {
  return absl::StrCat(RepoPath(repository), "/issues/", number, "/comments");
}

constexpr char kPullWhat[] = "pull request";

// One pull request of GitHub's (and Gitea's) answers: "merged" when `merged_at` is set (or
// `merged` is true, Gitea's spelling).
absl::StatusOr<ForgePull> ReadGithubPull(const json& item) {
  if (!item.is_object()) return absl::InvalidArgumentError("forge pull request: not an object");
  ForgePull pull;
  absl::StatusOr<int64_t> number = AnswerInteger(item, {"number"}, kPullWhat);
  if (!number.ok()) return number.status();
  absl::StatusOr<std::string> state = AnswerString(item, {"state"}, false, kPullWhat);
  if (!state.ok()) return state.status();
  if (*state != "open" && *state != "closed") {
    return absl::InvalidArgumentError("forge pull request: field state is neither open nor closed");
  }
  absl::StatusOr<std::string> merged_at = AnswerString(item, {"merged_at"}, true, kPullWhat);
  const bool merged =
      (merged_at.ok() && !merged_at->empty()) ||
      (item.contains("merged") && item["merged"].is_boolean() && item["merged"].get<bool>());
  pull.number = *number;
  pull.state = merged ? "merged" : *state;
  auto read = [&item](std::initializer_list<const char*> path, bool nullable, std::string& into) {
    absl::StatusOr<std::string> value = AnswerString(item, path, nullable, kPullWhat);
    if (value.ok()) into = *std::move(value);
    return value.status();
  };
  for (absl::Status status :
       {read({"title"}, false, pull.title), read({"body"}, true, pull.body),
        read({"head", "ref"}, false, pull.head_branch),
        read({"base", "ref"}, false, pull.base_branch), read({"html_url"}, false, pull.url)}) {
    if (!status.ok()) return status;
  }
  return pull;
}

// Whether pull request `item` (read by ReadGithubPull) is from a branch of the base repository:
// not from a fork, nor from one since deleted (its head repository is then null).
absl::StatusOr<bool> FromOwnRepository(const json& item) {
  absl::StatusOr<int64_t> base_repo = AnswerInteger(item, {"base", "repo", "id"}, kPullWhat);
  if (!base_repo.ok()) return base_repo.status();
  const json& head = item["head"];
  if (!head.contains("repo") || head["repo"].is_null()) return false;
  absl::StatusOr<int64_t> head_repo = AnswerInteger(item, {"head", "repo", "id"}, kPullWhat);
  if (!head_repo.ok()) return head_repo.status();
  return *head_repo == *base_repo;
}

std::string QueryString(std::initializer_list<std::pair<const char*, std::string>> params) {
  std::string query;
  for (const auto& [name, value] : params) {
    absl::StrAppend(&query, query.empty() ? "?" : "&", name, "=", PercentEncode(value));
  }
  return query;
}

}  // namespace

WebhookHeaders GithubDialect::PickHeaders(const HeaderLookup& header) const {
  WebhookHeaders h;
  h.event = FirstHeader(header, {"X-GitHub-Event"});
  h.delivery = FirstHeader(header, {"X-GitHub-Delivery"});
  h.signature = FirstHeader(header, {"X-Hub-Signature-256"});
  return h;
}

absl::Status GithubDialect::VerifySignature(std::string_view secret, const WebhookHeaders& headers,
                                            std::string_view body) const {
  return CheckHmacSignature(secret, headers.signature, /*prefix_required=*/true, body);
}

WebhookKind GithubDialect::KindOf(std::string_view event) const {
  if (event == "push") return WebhookKind::kPush;
  if (event == "pull_request") return WebhookKind::kPullRequest;
  if (event == "ping") return WebhookKind::kPing;
  return WebhookKind::kUnhandled;
}

absl::Status GithubDialect::ReadPayload(const json& payload, WebhookEvent& event) const {
  if (event.kind == WebhookKind::kPullRequest) return ReadPullRequest(payload, event);
  return ReadPushFields(payload, event);
}

std::optional<std::string> GithubDialect::DefaultApiUrl() const { return "https://api.github.com"; }

HeaderList GithubDialect::AuthHeaders(const std::string& token) const {
  return {{"Authorization", "Bearer " + token},
          {"Accept", "application/vnd.github+json"},
          {"X-GitHub-Api-Version", "2022-11-28"}};
}

ForgeRequest GithubDialect::ListCommentsRequest(const std::string& repository, int64_t number,
                                                int page) const {
  return {"GET", absl::StrCat(CommentsPath(repository, number), "?per_page=100&page=", page),
          std::nullopt};
}

ForgeRequest GithubDialect::CreateCommentRequest(const std::string& repository, int64_t number,
                                                 const std::string& body) const {
  return {"POST", CommentsPath(repository, number), json{{"body", body}}};
}

ForgeRequest GithubDialect::EditCommentRequest(const std::string& repository, int64_t /*number*/,
                                               int64_t comment_id, const std::string& body) const {
  return {"PATCH", absl::StrCat(RepoPath(repository), "/issues/comments/", comment_id),
          json{{"body", body}}};
}

ForgeRequest GithubDialect::CommitStatusRequest(const std::string& repository,
                                                const CommitStatus& status) const {
  json body{{"state", CommitStateName(status.state)},
            {"description", CutUtf8(status.description, kMaxDescriptionBytes)},
            {"context", status.context}};
  if (!status.target_url.empty()) body["target_url"] = status.target_url;
  return {"POST", absl::StrCat(RepoPath(repository), "/statuses/", status.sha), std::move(body)};
}

std::optional<ForgeRequest> GithubDialect::PullsOfCommitRequest(const std::string& repository,
                                                                const std::string& sha) const {
  return ForgeRequest{"GET", absl::StrCat(RepoPath(repository), "/commits/", sha, "/pulls"),
                      std::nullopt};
}

absl::StatusOr<std::optional<int64_t>> GithubDialect::ParsePullOfCommit(
    std::string_view text) const {
  absl::StatusOr<json> value = ParseAnswer(text);
  if (!value.ok()) return value.status();
  if (!value->is_array()) return absl::InvalidArgumentError("forge pulls of commit: not a list");
  for (const json& item : *value) {
    if (item.is_object() && item.contains("merged_at") && item["merged_at"].is_string() &&
        item.contains("number") && item["number"].is_number_integer()) {
      return std::optional<int64_t>(item["number"].get<int64_t>());
    }
  }
  return std::optional<int64_t>();
}

ForgeRequest GithubDialect::PullsFromBranchRequest(const std::string& repository,
                                                   const std::string& head_branch, int page) const {
  const std::string owner = repository.substr(0, repository.find('/'));
  return {"GET",
          absl::StrCat(RepoPath(repository), "/pulls",
                       QueryString({{"state", "all"},
                              {"head", owner + ":" + head_branch},
                              {"per_page", "100"},
                              {"page", absl::StrCat(page)}})),
          std::nullopt};
}

absl::StatusOr<ForgePullPage> GithubDialect::ParsePulls(std::string_view text,
                                                        const std::string& head_branch) const {
  absl::StatusOr<json> value = ParseAnswer(text);
  if (!value.ok()) return value.status();
  if (!value->is_array()) return absl::InvalidArgumentError("forge pull requests: not a list");
  ForgePullPage page;
  page.entries = value->size();
  for (const json& item : *value) {
    absl::StatusOr<ForgePull> pull = ReadGithubPull(item);
    if (!pull.ok()) return pull.status();
    absl::StatusOr<bool> own = FromOwnRepository(item);
    if (!own.ok()) return own.status();
    if (*own && pull->head_branch == head_branch) {
      page.pulls.push_back(*std::move(pull));
    }
  }
  return page;
}

absl::StatusOr<ForgePull> GithubDialect::ParsePull(std::string_view text) const {
  absl::StatusOr<json> value = ParseAnswer(text);
  if (!value.ok()) return value.status();
  return ReadGithubPull(*value);
}

ForgeRequest GithubDialect::CreatePullRequest(const std::string& repository, const PullDraft& draft,
                                              const std::vector<int64_t>& /*label_ids*/) const {
  return {"POST", RepoPath(repository) + "/pulls",
          json{{"title", draft.title},
               {"head", draft.head_branch},
               {"base", draft.base_branch},
               {"body", draft.body}}};
}

std::optional<ForgeRequest> GithubDialect::AddLabelsRequest(
    const std::string& repository, int64_t number, const std::vector<std::string>& labels) const {
  if (labels.empty()) return std::nullopt;  // GitHub asks for at least one
  return ForgeRequest{"POST", absl::StrCat(RepoPath(repository), "/issues/", number, "/labels"),
                      json{{"labels", labels}}};
}

ForgeRequest GithubDialect::EditPullRequest(const std::string& repository, int64_t number,
                                            const std::string& title,
                                            const std::string& body) const {
  return {"PATCH", absl::StrCat(RepoPath(repository), "/pulls/", number),
          json{{"title", title}, {"body", body}}};
}

std::string GithubDialect::HeadRef(int64_t number) const {
  return absl::StrCat("refs/pull/", number, "/head");
}

std::string GithubDialect::TreeUrl(const std::string& web, const std::string& branch,
                                   const std::string& path) const {
  return absl::StrCat(web, "/tree/", branch, "/", path);
}

const ForgeDialect& Github() {
  static const GithubDialect dialect;
  return dialect;
}

}  // namespace tr::reconciler::forge
