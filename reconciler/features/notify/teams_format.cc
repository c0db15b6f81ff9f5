#include "reconciler/features/notify/teams_format.h"

#include "core/inert_text.h"
#include "reconciler/features/notify/chat_message.h"

namespace tr::reconciler::notify {
namespace {

// An Adaptive Card container style per severity (its background, as Teams draws it).
const char* ContainerStyle(Tone tone) {
  switch (tone) {
    case Tone::kInfo:
      return "accent";
    case Tone::kGood:
      return "good";
    case Tone::kWarning:
      return "warning";
    case Tone::kBad:
      return "attention";
  }
  return "accent";
}

nlohmann::json Card(const Notification& n) {
  nlohmann::json header{{"type", "Container"},
                        {"style", ContainerStyle(ToneOf(n.event))},
                        {"bleed", true},
                        {"items", nlohmann::json::array({{{"type", "TextBlock"},
                                                          {"text", Title(n)},
                                                          {"weight", "Bolder"},
                                                          {"size", "Medium"},
                                                          {"wrap", true}}})}};
  nlohmann::json body = nlohmann::json::array({header});
  if (!n.message.empty()) {
    body.push_back({{"type", "TextBlock"}, {"text", core::InertMarkdown(n.message)}, {"wrap", true}});
  }
  nlohmann::json facts = nlohmann::json::array();
  for (const Fact& fact : FactsOf(n)) facts.push_back({{"title", fact.label}, {"value", fact.value}});
  body.push_back({{"type", "FactSet"}, {"facts", facts}});
  return {{"type", "AdaptiveCard"},
          {"$schema", "http://adaptivecards.io/schemas/adaptive-card.json"},
          {"version", "1.4"},
          {"body", body}};
}

}  // namespace

std::string TeamsFormat::Render(const Notification& n, const std::string& /*delivery_id*/) const {
  const nlohmann::json attachment{{"contentType", "application/vnd.microsoft.card.adaptive"},
                                  {"content", Card(n)}};
  return DumpPayload({{"type", "message"}, {"attachments", nlohmann::json::array({attachment})}});
}

}  // namespace tr::reconciler::notify
