#include "reconciler/features/webhooks/webhook_parse.h"

#include "base/hmac.h"
#include "nlohmann/json.hpp"

namespace tr::reconciler::webhooks {

using forge::PullRequestAction;
using forge::WebhookEvent;
using forge::WebhookKind;

absl::StatusOr<WebhookEvent> ParseWebhook(const forge::ForgeDialect& dialect,
                                          const forge::WebhookHeaders& headers,
                                          std::string_view body) {
  const nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return absl::InvalidArgumentError("payload is not a JSON object");
  WebhookEvent event;
  event.forge = dialect.name();
  event.event = headers.event;
  event.delivery =
      headers.delivery.empty() ? "sha256:" + HmacSha256Hex("delivery", body) : headers.delivery;
  event.kind = dialect.KindOf(headers.event);
  if (event.kind == WebhookKind::kPush || event.kind == WebhookKind::kPullRequest) {
    if (absl::Status read = dialect.ReadPayload(doc, event); !read.ok()) return read;
  }
  return event;
}

bool IsRelevant(const WebhookEvent& event, const std::string& branch) {
  switch (event.kind) {
    case WebhookKind::kPush:
      return event.ref == "refs/heads/" + branch || event.any_branch;
    case WebhookKind::kPullRequest:
      return event.base_branch == branch && event.action != PullRequestAction::kOther;
    case WebhookKind::kPing:
    case WebhookKind::kUnhandled:
      return false;
  }
  return false;
}

}  // namespace tr::reconciler::webhooks
