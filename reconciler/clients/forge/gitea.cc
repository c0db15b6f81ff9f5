#include "reconciler/clients/forge/gitea.h"

#include "absl/strings/str_cat.h"
#include "reconciler/clients/forge/webhook_reading.h"

namespace tr::reconciler::forge {

WebhookHeaders GiteaDialect::PickHeaders(const HeaderLookup& header) const {
  WebhookHeaders h;
  h.event = FirstHeader(header, headers_.event);
  h.delivery = FirstHeader(header, headers_.delivery);
  h.signature = FirstHeader(header, headers_.signature);
  return h;
}

absl::Status GiteaDialect::VerifySignature(std::string_view secret, const WebhookHeaders& headers,
                                           std::string_view body) const {
  return CheckHmacSignature(secret, headers.signature, /*prefix_required=*/false, body);
}

HeaderList GiteaDialect::AuthHeaders(const std::string& token) const {
  return {{"Authorization", "token " + token}, {"Accept", "application/json"}};
}

ForgeRequest GiteaDialect::ListCommentsRequest(const std::string& repository, int64_t number,
                                               int page) const {
  return {"GET",
          absl::StrCat("/repos/", repository, "/issues/", number, "/comments?limit=50&page=", page),
          std::nullopt};
}

std::optional<ForgeRequest> GiteaDialect::PullsOfCommitRequest(const std::string& /*repository*/,
                                                               const std::string& /*sha*/) const {
  return std::nullopt;
}

ForgeRequest GiteaDialect::PullsFromBranchRequest(const std::string& repository,
                                                  const std::string& /*head_branch*/,
                                                  int page) const {
  return {"GET", absl::StrCat("/repos/", repository, "/pulls?state=all&limit=50&page=", page),
          std::nullopt};
}

std::optional<ForgeRequest> GiteaDialect::ListLabelsRequest(const std::string& repository,
                                                            int page) const {
  return ForgeRequest{"GET", absl::StrCat("/repos/", repository, "/labels?limit=50&page=", page),
                      std::nullopt};
}

absl::StatusOr<std::vector<ForgeLabel>> GiteaDialect::ParseLabels(std::string_view text) const {
  absl::StatusOr<nlohmann::json> value = ParseAnswer(text);
  if (!value.ok()) return value.status();
  if (!value->is_array()) return absl::InvalidArgumentError("forge labels: not a list");
  std::vector<ForgeLabel> labels;
  for (const nlohmann::json& item : *value) {
    absl::StatusOr<int64_t> id = AnswerInteger(item, {"id"}, "label");
    if (!id.ok()) return id.status();
    absl::StatusOr<std::string> name = AnswerString(item, {"name"}, false, "label");
    if (!name.ok()) return name.status();
    labels.push_back({*id, *std::move(name)});
  }
  return labels;
}

ForgeRequest GiteaDialect::CreatePullRequest(const std::string& repository, const PullDraft& draft,
                                             const std::vector<int64_t>& label_ids) const {
  nlohmann::json body{{"title", draft.title},
                      {"head", draft.head_branch},
                      {"base", draft.base_branch},
                      {"body", draft.body}};
  if (!label_ids.empty()) body["labels"] = label_ids;
  return {"POST", absl::StrCat("/repos/", repository, "/pulls"), std::move(body)};
}

std::optional<ForgeRequest> GiteaDialect::AddLabelsRequest(
    const std::string& /*repository*/, int64_t /*number*/,
    const std::vector<std::string>& /*labels*/) const {
  return std::nullopt;
}

// Gitea also accepts the headers of Forgejo and Gogs, which send Gitea's payloads.
const ForgeDialect& Gitea() {
  static const GiteaDialect dialect(
      "gitea", {{"X-Gitea-Event", "X-Forgejo-Event", "X-Gogs-Event"},
                {"X-Gitea-Delivery", "X-Forgejo-Delivery", "X-Gogs-Delivery"},
                {"X-Gitea-Signature", "X-Forgejo-Signature", "X-Hub-Signature-256"}});
  return dialect;
}

std::string GiteaDialect::TreeUrl(const std::string& web, const std::string& branch,
                                  const std::string& path) const {
  return absl::StrCat(web, "/src/branch/", branch, "/", path);
}

}  // namespace tr::reconciler::forge
