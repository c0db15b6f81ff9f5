// Reading a verified delivery with its sender's dialect, and deciding whether the reconciler
// acts on it.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "reconciler/clients/forge/forge_dialect.h"
#include "reconciler/clients/forge/webhook_event.h"

namespace tr::reconciler::webhooks {

// Reads a verified delivery sent in `dialect`. Push and pull-request events must carry the
// fields named in forge::WebhookEvent, else InvalidArgument naming the field; other events (and
// `ping`) are returned with their kind and no fields. InvalidArgument when `body` is not a JSON
// object.
absl::StatusOr<forge::WebhookEvent> ParseWebhook(const forge::ForgeDialect& dialect,
                                                 const forge::WebhookHeaders& headers,
                                                 std::string_view body);

// Whether the reconciler acts on `event` when it watches `branch`: a push to that branch (or
// to a branch the sender did not name), or a pull request into it that was opened, updated,
// reopened, merged or closed (its preview is dropped). Everything else is answered and ignored.
bool IsRelevant(const forge::WebhookEvent& event, const std::string& branch);

}  // namespace tr::reconciler::webhooks
