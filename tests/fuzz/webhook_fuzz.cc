// A webhook delivery's body for each forge (the first byte picks GitHub, GitLab, Gitea or the
// generic hook) and each event the receiver reads. Parsing comes after the signature check,
// but a forge's own payloads are still outside data.
#include "reconciler/clients/forge/forge_dialect.h"
#include "reconciler/features/webhooks/webhook_parse.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// Forgejo reads payloads as Gitea does; the seeds keep their meaning with these four.
constexpr const char* kForges[] = {"github", "gitlab", "gitea", "generic"};
constexpr const char* kEvents[] = {"push", "pull_request", "Push Hook", "Merge Request Hook",
                                   "ping"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tr::fuzz::Selected selected = tr::fuzz::Select(data, size, 4 * 5);
  tr::reconciler::forge::WebhookHeaders headers;
  headers.event = kEvents[selected.choice / 4];
  headers.delivery = "fuzz";
  const auto* dialect = tr::reconciler::forge::FindDialect(kForges[selected.choice % 4]);
  const auto event = tr::reconciler::webhooks::ParseWebhook(*dialect, headers, selected.rest);
  if (event.ok()) (void)tr::reconciler::webhooks::IsRelevant(*event, "main");
  return 0;
}
