// A webhook delivery's body for each forge (the first byte picks GitHub, GitLab, Gitea or the
// generic hook) and each event the receiver reads. Parsing comes after the signature check,
// but a forge's own payloads are still outside data.
#include "reconciler/forge/webhook_event.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using tr::reconciler::forge::Forge;

constexpr Forge kForges[] = {Forge::kGithub, Forge::kGitlab, Forge::kGitea, Forge::kGeneric};
constexpr const char* kEvents[] = {"push", "pull_request", "Push Hook", "Merge Request Hook",
                                   "ping"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tr::fuzz::Selected selected = tr::fuzz::Select(data, size, 4 * 5);
  tr::reconciler::forge::WebhookHeaders headers;
  headers.event = kEvents[selected.choice / 4];
  headers.delivery = "fuzz";
  const auto event =
      tr::reconciler::forge::ParseWebhook(kForges[selected.choice % 4], headers, selected.rest);
  if (event.ok()) (void)tr::reconciler::forge::IsRelevant(*event, "main");
  return 0;
}
