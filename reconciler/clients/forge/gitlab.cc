// GitLab's dialect (gitlab.com and self-hosted, API /api/v4): X-Gitlab-Token webhooks, merge
// requests by iid, notes for comments, projects named by their URL-encoded path, merge requests
// opened with their labels by name.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/hmac.h"
#include "base/percent_encoding.h"
#include "reconciler/clients/forge/forge_dialect.h"
#include "reconciler/clients/forge/webhook_reading.h"

namespace tr::reconciler::forge {
namespace {

using nlohmann::json;

PullRequestAction ActionOf(const std::string& action) {
  if (action == "open") return PullRequestAction::kOpened;
  if (action == "update") return PullRequestAction::kUpdated;
  if (action == "reopen") return PullRequestAction::kReopened;
  if (action == "close") return PullRequestAction::kClosed;
  if (action == "merge") return PullRequestAction::kMerged;
  return PullRequestAction::kOther;
}

absl::Status ReadMergeRequest(const json& doc, WebhookEvent& event) {
  absl::StatusOr<int64_t> iid = NumberAt(doc, "object_attributes", "iid");
  if (!iid.ok()) return iid.status();
  absl::StatusOr<std::string> action = StringAt(doc, {"object_attributes", "action"});
  if (!action.ok()) return action.status();
  absl::StatusOr<std::string> head = StringAt(doc, {"object_attributes", "last_commit", "id"});
  if (!head.ok()) return head.status();
  absl::StatusOr<std::string> base = StringAt(doc, {"object_attributes", "target_branch"});
  if (!base.ok()) return base.status();
  absl::StatusOr<std::string> merge_commit =
      StringAt(doc, {"object_attributes", "merge_commit_sha"});
  event.number = *iid;
  event.action = ActionOf(*action);
  event.head_sha = *head;
  event.base_branch = *base;
  if (event.action == PullRequestAction::kMerged && merge_commit.ok()) {
    event.merge_commit = *merge_commit;
  }
  return absl::OkStatus();
}

std::string ProjectPath(const std::string& repository) {
  return "/projects/" + PercentEncode(repository);  // "group%2Fproject"
}

std::string NotesPath(const std::string& repository, int64_t number) {
  return absl::StrCat(ProjectPath(repository), "/merge_requests/", number, "/notes");
}

// pending|running|success|failed|canceled: GitLab has one state for failure and error.
std::string StateOnGitlab(CommitState state) {
  if (state == CommitState::kFailure || state == CommitState::kError) return "failed";
  return CommitStateName(state);
}

constexpr char kMergeRequestWhat[] = "merge request";

// One merge request of GitLab's answers. Its state: opened (or locked, an open one frozen for a
// moment), closed, merged.
absl::StatusOr<ForgePull> ReadMergeRequestAnswer(const json& item) {
  if (!item.is_object()) return absl::InvalidArgumentError("forge merge request: not an object");
  ForgePull pull;
  absl::StatusOr<int64_t> iid = AnswerInteger(item, {"iid"}, kMergeRequestWhat);
  if (!iid.ok()) return iid.status();
  pull.number = *iid;
  auto read = [&item](const char* key, bool nullable, std::string& into) {
    absl::StatusOr<std::string> value = AnswerString(item, {key}, nullable, kMergeRequestWhat);
    if (value.ok()) into = *std::move(value);
    return value.status();
  };
  for (absl::Status status :
       {read("state", false, pull.state), read("title", false, pull.title),
        read("description", true, pull.body), read("source_branch", false, pull.head_branch),
        read("target_branch", false, pull.base_branch), read("web_url", false, pull.url)}) {
    if (!status.ok()) return status;
  }
  if (pull.state == "opened" || pull.state == "locked") {
    pull.state = "open";
  } else if (pull.state != "closed" && pull.state != "merged") {
    return absl::InvalidArgumentError(
        "forge merge request: field state is none of opened, locked, closed, merged");
  }
  return pull;
}

// Whether merge request `item` is from a branch of the project itself, not of a fork.
absl::StatusOr<bool> FromOwnProject(const json& item) {
  absl::StatusOr<int64_t> source = AnswerInteger(item, {"source_project_id"}, kMergeRequestWhat);
  if (!source.ok()) return source.status();
  absl::StatusOr<int64_t> target = AnswerInteger(item, {"target_project_id"}, kMergeRequestWhat);
  if (!target.ok()) return target.status();
  return *source == *target;
}

class GitlabDialect final : public ForgeApiDialect {
 public:
  std::string_view name() const override { return "gitlab"; }

  WebhookHeaders PickHeaders(const HeaderLookup& header) const override {
    WebhookHeaders h;
    h.event = FirstHeader(header, {"X-Gitlab-Event"});
    h.delivery = FirstHeader(header, {"X-Gitlab-Event-UUID"});
    h.token = FirstHeader(header, {"X-Gitlab-Token"});
    return h;
  }

  // A plain shared token, no HMAC. Digests are compared so that the time taken says nothing
  // about the secret's length either.
  absl::Status VerifySignature(std::string_view secret, const WebhookHeaders& headers,
                               std::string_view /*body*/) const override {
    if (headers.token.empty()) return absl::UnauthenticatedError("no X-Gitlab-Token");
    if (!ConstantTimeEquals(HmacSha256Hex("gitlab-token", headers.token),
                            HmacSha256Hex("gitlab-token", secret))) {
      return absl::UnauthenticatedError("wrong X-Gitlab-Token");
    }
    return absl::OkStatus();
  }

  WebhookKind KindOf(std::string_view event) const override {
    if (event == "Push Hook") return WebhookKind::kPush;
    if (event == "Merge Request Hook") return WebhookKind::kPullRequest;
    return WebhookKind::kUnhandled;
  }

  absl::Status ReadPayload(const json& payload, WebhookEvent& event) const override {
    if (event.kind == WebhookKind::kPullRequest) return ReadMergeRequest(payload, event);
    return ReadPushFields(payload, event);
  }

  std::optional<std::string> DefaultApiUrl() const override { return std::nullopt; }

  HeaderList AuthHeaders(const std::string& token) const override {
    return {{"PRIVATE-TOKEN", token}, {"Accept", "application/json"}};
  }

  size_t CommentsPageSize() const override { return 100; }

  ForgeRequest ListCommentsRequest(const std::string& repository, int64_t number,
                                   int page) const override {
    return {"GET",
            absl::StrCat(NotesPath(repository, number), "?per_page=100&page=", page,
                         "&sort=asc&order_by=created_at"),
            std::nullopt};
  }

  ForgeRequest CreateCommentRequest(const std::string& repository, int64_t number,
                                    const std::string& body) const override {
    return {"POST", NotesPath(repository, number), json{{"body", body}}};
  }

  ForgeRequest EditCommentRequest(const std::string& repository, int64_t number, int64_t comment_id,
                                  const std::string& body) const override {
    return {"PUT", absl::StrCat(NotesPath(repository, number), "/", comment_id),
            json{{"body", body}}};
  }

  ForgeRequest CommitStatusRequest(const std::string& repository,
                                   const CommitStatus& status) const override {
    json body{{"state", StateOnGitlab(status.state)},
              {"description", CutUtf8(status.description, kMaxDescriptionBytes)},
              {"name", status.context}};
    if (!status.target_url.empty()) body["target_url"] = status.target_url;
    return {"POST", absl::StrCat(ProjectPath(repository), "/statuses/", status.sha),
            std::move(body)};
  }

  std::optional<ForgeRequest> PullsOfCommitRequest(const std::string& repository,
                                                   const std::string& sha) const override {
    return ForgeRequest{
        "GET",
        absl::StrCat(ProjectPath(repository), "/repository/commits/", sha, "/merge_requests"),
        std::nullopt};
  }

  // The `iid` of the entry whose state is "merged".
  absl::StatusOr<std::optional<int64_t>> ParsePullOfCommit(std::string_view text) const override {
    absl::StatusOr<json> value = ParseAnswer(text);
    if (!value.ok()) return value.status();
    if (!value->is_array()) return absl::InvalidArgumentError("forge pulls of commit: not a list");
    for (const json& item : *value) {
      if (item.is_object() && item.value("state", "") == "merged" && item.contains("iid") &&
          item["iid"].is_number_integer()) {
        return std::optional<int64_t>(item["iid"].get<int64_t>());
      }
    }
    return std::optional<int64_t>();
  }

  size_t PullsPageSize() const override { return 100; }

  // GitLab filters by source branch; newest first.
  ForgeRequest PullsFromBranchRequest(const std::string& repository, const std::string& head_branch,
                                      int page) const override {
    return {"GET",
            absl::StrCat(ProjectPath(repository), "/merge_requests?source_branch=",
                         PercentEncode(head_branch), "&state=all&per_page=100&page=", page),
            std::nullopt};
  }

  // Those from the branch of this project (a fork's source_project_id differs).
  absl::StatusOr<ForgePullPage> ParsePulls(std::string_view text,
                                           const std::string& head_branch) const override {
    absl::StatusOr<json> value = ParseAnswer(text);
    if (!value.ok()) return value.status();
    if (!value->is_array()) return absl::InvalidArgumentError("forge merge requests: not a list");
    ForgePullPage page;
    page.entries = value->size();
    for (const json& item : *value) {
      absl::StatusOr<ForgePull> pull = ReadMergeRequestAnswer(item);
      if (!pull.ok()) return pull.status();
      absl::StatusOr<bool> own = FromOwnProject(item);
      if (!own.ok()) return own.status();
      if (*own && pull->head_branch == head_branch) page.pulls.push_back(*std::move(pull));
    }
    return page;
  }

  absl::StatusOr<ForgePull> ParsePull(std::string_view text) const override {
    absl::StatusOr<json> value = ParseAnswer(text);
    if (!value.ok()) return value.status();
    return ReadMergeRequestAnswer(*value);
  }

  // Labels by name, comma-separated; GitLab creates those the project does not have yet.
  ForgeRequest CreatePullRequest(const std::string& repository, const PullDraft& draft,
                                 const std::vector<int64_t>& /*label_ids*/) const override {
    json body{{"source_branch", draft.head_branch},
              {"target_branch", draft.base_branch},
              {"title", draft.title},
              {"description", draft.body}};
    if (!draft.labels.empty()) body["labels"] = absl::StrJoin(draft.labels, ",");
    return {"POST", ProjectPath(repository) + "/merge_requests", std::move(body)};
  }

  std::optional<ForgeRequest> AddLabelsRequest(
      const std::string& /*repository*/, int64_t /*number*/,
      const std::vector<std::string>& /*labels*/) const override {
    return std::nullopt;  // taken on creation
  }

  ForgeRequest EditPullRequest(const std::string& repository, int64_t number,
                               const std::string& title, const std::string& body) const override {
    return {"PUT", absl::StrCat(ProjectPath(repository), "/merge_requests/", number),
            json{{"title", title}, {"description", body}}};
  }

  std::string HeadRef(int64_t number) const override {
    return absl::StrCat("refs/merge-requests/", number, "/head");
  }

  std::string TreeUrl(const std::string& web, const std::string& branch,
                      const std::string& path) const override {
    return absl::StrCat(web, "/-/tree/", branch, "/", path);
  }
};

}  // namespace

const ForgeDialect& Gitlab() {
  static const GitlabDialect dialect;
  return dialect;
}

}  // namespace tr::reconciler::forge
