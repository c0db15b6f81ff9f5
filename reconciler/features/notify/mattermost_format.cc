#include "reconciler/features/notify/mattermost_format.h"

#include "core/inert_text.h"
#include "reconciler/features/notify/chat_message.h"

namespace tr::reconciler::notify {

std::string MattermostFormat::Render(const Notification& n,
                                     const std::string& /*delivery_id*/) const {
  nlohmann::json fields = nlohmann::json::array();
  for (const Fact& fact : FactsOf(n)) {
    fields.push_back({{"title", fact.label}, {"value", fact.value}, {"short", true}});
  }
  // The fallback is shown as plain text in notifications: the message made inert there too.
  Notification inert = n;
  inert.message = core::InertMarkdown(n.message);
  nlohmann::json attachment{{"fallback", SummaryLine(inert, /*markup=*/false)},
                            {"color", ToneColour(ToneOf(n.event))},
                            {"title", Title(n)},
                            {"fields", fields}};
  if (!n.message.empty()) attachment["text"] = core::InertMarkdown(n.message);
  return DumpPayload({{"username", "talos-reconciler"}, {"attachments", nlohmann::json::array({attachment})}});
}

}  // namespace tr::reconciler::notify
