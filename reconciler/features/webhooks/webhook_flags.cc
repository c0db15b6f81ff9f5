#include "reconciler/features/webhooks/webhook_flags.h"

#include "base/secret_file.h"
#include "reconciler/clients/forge/forge_dialect.h"
#include "reconciler/runtime/flags.h"
#include "reconciler/runtime/git_flags.h"

namespace tr::reconciler::webhooks {

using flags::Flag;
using flags::Invalid;

void WebhookFlags::AddFlags(CLI::App& cmd) {
  Flag(cmd, "webhook-listen", listen,
       "host:port for POST /hooks/" + forge::DialectNames("|", /*api_only=*/false) +
           " (default: no webhook listener)");
  Flag(cmd, "webhook-secret-file", secret_file,
       "File holding the webhook secret (HMAC key; GitLab's token)");
  Flag(cmd, "webhook-queue", queue, "Verified deliveries waiting before 503");
}

absl::Status WebhookFlags::Finish() const {
  if (!listen.empty()) {
    if (absl::Status s = CheckListenAddress("webhook-listen", listen); !s.ok()) return s;
    if (secret_file.empty()) return Invalid("webhook-secret-file", "required");
    auto secret = ReadSecretFile(secret_file, kMinWebhookSecretBytes);
    if (!secret.ok()) return Invalid("webhook-secret-file", std::string(secret.status().message()));
  }
  if (queue < 1 || queue > 100000) return Invalid("webhook-queue", "1 to 100000");
  return absl::OkStatus();
}

}  // namespace tr::reconciler::webhooks
