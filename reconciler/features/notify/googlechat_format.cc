#include "reconciler/features/notify/googlechat_format.h"

#include "core/inert_text.h"
#include "reconciler/features/notify/chat_message.h"

namespace tr::reconciler::notify {
namespace {

constexpr char kReplyOption[] = "messageReplyOption=";

nlohmann::json Card(const Notification& n) {
  nlohmann::json widgets = nlohmann::json::array();
  if (!n.message.empty()) {
    widgets.push_back({{"textParagraph", {{"text", core::InertAngleMarkup(n.message)}}}});
  }
  for (const Fact& fact : FactsOf(n)) {
    widgets.push_back({{"decoratedText", {{"topLabel", fact.label}, {"text", fact.value}}}});
  }
  const nlohmann::json section{{"widgets", widgets}};
  return {{"header", {{"title", Title(n)}, {"subtitle", n.phase}}},
          {"sections", nlohmann::json::array({section})}};
}

}  // namespace

std::string RolloutThreadKey(const Notification& n) {
  return "talos-reconciler/" + n.cluster + "/" + n.commit + "/talos-" + n.talos_target +
         "/kubernetes-" + n.kubernetes_target;
}

std::string GoogleChatFormat::Render(const Notification& n,
                                     const std::string& /*delivery_id*/) const {
  const nlohmann::json card{{"cardId", "talos-reconciler"}, {"card", Card(n)}};
  return DumpPayload({{"text", SummaryLine(n)},
                      {"cardsV2", nlohmann::json::array({card})},
                      {"thread", {{"threadKey", RolloutThreadKey(n)}}}});
}

std::string GoogleChatFormat::Path(const std::string& configured_path) const {
  if (configured_path.find(kReplyOption) != std::string::npos) return configured_path;
  const char separator = configured_path.find('?') == std::string::npos ? '?' : '&';
  return configured_path + separator + kReplyOption + "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD";
}

}  // namespace tr::reconciler::notify
