// The generic dialect: any other Git server (a plain `git daemon`, cgit, a post-receive hook)
// whose hook signs a small body with the shared secret. It has no forge API, so it is never a
// `--forge`: a delivery only says that something moved, and the poll decides what.
#include "reconciler/clients/forge/forge_dialect.h"
#include "reconciler/clients/forge/webhook_reading.h"

namespace tr::reconciler::forge {
namespace {

class GenericDialect final : public ForgeDialect {
 public:
  std::string_view name() const override { return "generic"; }

  // X-Signature-256 and an optional X-Delivery-Id; every delivery is a push.
  WebhookHeaders PickHeaders(const HeaderLookup& header) const override {
    WebhookHeaders h;
    h.event = "push";
    h.delivery = FirstHeader(header, {"X-Delivery-Id"});
    h.signature = FirstHeader(header, {"X-Signature-256"});
    return h;
  }

  // `sha256=<hex HMAC-SHA256>`.
  absl::Status VerifySignature(std::string_view secret, const WebhookHeaders& headers,
                               std::string_view body) const override {
    return CheckHmacSignature(secret, headers.signature, /*prefix_required=*/true, body);
  }

  WebhookKind KindOf(std::string_view /*event*/) const override { return WebhookKind::kPush; }

  // {"ref": "refs/heads/main"} or {}: a hook may not know which branch moved (then the watched
  // branch is polled); `after` is not read.
  absl::Status ReadPayload(const nlohmann::json& payload, WebhookEvent& event) const override {
    if (payload.contains("ref")) {
      absl::StatusOr<std::string> ref = StringAt(payload, {"ref"});
      if (!ref.ok()) return ref.status();
      event.ref = *ref;
    }
    event.any_branch = event.ref.empty();
    return absl::OkStatus();
  }
};

}  // namespace

const ForgeDialect& Generic() {
  static const GenericDialect dialect;
  return dialect;
}

}  // namespace tr::reconciler::forge
