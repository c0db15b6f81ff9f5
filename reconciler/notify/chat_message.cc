#include "reconciler/notify/chat_message.h"

namespace tr::reconciler::notify {
namespace {

// "1.11.6 → 1.12.0"; one version when only one is known or both are the same (nothing to
// upgrade).
std::string Versions(const std::string& current, const std::string& target) {
  if (target.empty()) return current;
  if (current.empty() || current == target) return target;
  return current + " → " + target;
}

}  // namespace

Severity SeverityOf(NotificationEvent event) {
  switch (event) {
    case NotificationEvent::kRolloutStarted:
    case NotificationEvent::kNodeUpgraded:
      return Severity::kInfo;
    case NotificationEvent::kRolloutCompleted:
      return Severity::kGood;
    case NotificationEvent::kRolloutBlocked:
    case NotificationEvent::kWaitingForGate:
      return Severity::kWarning;
    case NotificationEvent::kRolloutFailed:
      return Severity::kBad;
  }
  return Severity::kInfo;
}

std::string_view SeverityColour(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "#2F6FDB";
    case Severity::kGood:
      return "#1E9E5A";
    case Severity::kWarning:
      return "#D98C1A";
    case Severity::kBad:
      return "#C8312B";
  }
  return "#2F6FDB";
}

std::string SummaryLine(const Notification& n, bool markup) {
  const std::string bold = markup ? "*" : "", code = markup ? "`" : "";
  std::string text = bold + n.cluster + bold + " " + NotificationEventName(n.event);
  if (!n.node.empty()) text += " " + code + n.node + code;
  if (!n.talos_target.empty()) text += " (Talos " + n.talos_target + ")";
  if (!n.progress.empty()) text += " " + n.progress;
  if (!n.message.empty()) text += ": " + n.message;
  return text;
}

std::string Title(const Notification& n) {
  return n.cluster + ": " + NotificationEventName(n.event);
}

std::vector<Fact> FactsOf(const Notification& n) {
  std::vector<Fact> facts{{"Event", NotificationEventName(n.event)}};
  auto add = [&facts](const char* label, const std::string& value) {
    if (!value.empty()) facts.push_back({label, value});
  };
  add("Phase", n.phase);
  add("Node", n.node);
  add("Talos", Versions(n.talos_current, n.talos_target));
  add("Kubernetes", Versions(n.kubernetes_current, n.kubernetes_target));
  add("Progress", n.progress);
  add("Commit", n.commit.substr(0, 12));
  return facts;
}

std::string DumpPayload(const nlohmann::json& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tr::reconciler::notify
