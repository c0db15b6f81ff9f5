#include "reconciler/features/notify/chat_message.h"

#include "core/inert_text.h"

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

Tone ToneOf(NotificationEvent event) {
  switch (event) {
    case NotificationEvent::kRolloutStarted:
    case NotificationEvent::kNodeUpgraded:
      return Tone::kInfo;
    case NotificationEvent::kRolloutCompleted:
      return Tone::kGood;
    case NotificationEvent::kRolloutBlocked:
    case NotificationEvent::kWaitingForGate:
      return Tone::kWarning;
    case NotificationEvent::kRolloutFailed:
      return Tone::kBad;
  }
  return Tone::kInfo;
}

std::string_view ToneColour(Tone tone) {
  switch (tone) {
    case Tone::kInfo:
      return "#2F6FDB";
    case Tone::kGood:
      return "#1E9E5A";
    case Tone::kWarning:
      return "#D98C1A";
    case Tone::kBad:
      return "#C8312B";
  }
  return "#2F6FDB";
}

uint32_t ToneRgb(Tone tone) {
  return static_cast<uint32_t>(std::stoul(std::string(ToneColour(tone).substr(1)), nullptr, 16));
}

std::string VersionsLine(const Notification& n) {
  std::string line;
  auto add = [&line](const char* name, const std::string& versions) {
    if (versions.empty()) return;
    line += (line.empty() ? "" : ", ") + std::string(name) + " " + versions;
  };
  add("Talos", Versions(n.talos_current, n.talos_target));
  add("Kubernetes", Versions(n.kubernetes_current, n.kubernetes_target));
  return line;
}

std::string StateLine(const Notification& n) {
  switch (n.event) {
    case NotificationEvent::kRolloutStarted:
    case NotificationEvent::kNodeUpgraded:
      return n.progress.empty() ? "in progress" : "in progress (" + n.progress + " nodes)";
    case NotificationEvent::kRolloutCompleted:
      return "completed";
    case NotificationEvent::kRolloutFailed:
      return "failed";
    case NotificationEvent::kRolloutBlocked:
      return "blocked";
    case NotificationEvent::kWaitingForGate:
      return "waiting for a health gate";
  }
  return "unknown";
}

std::string ShortCommit(const std::string& commit) { return commit.substr(0, 12); }

std::string SummaryLine(const Notification& n, bool markup) {
  const std::string bold = markup ? "*" : "", code = markup ? "`" : "";
  std::string text = bold + n.cluster + bold + " " + NotificationEventName(n.event);
  if (!n.node.empty()) text += " " + code + n.node + code;
  if (!n.talos_target.empty()) text += " (Talos " + n.talos_target + ")";
  if (!n.progress.empty()) text += " " + n.progress;
  if (!n.message.empty()) text += ": " + (markup ? core::InertAngleMarkup(n.message) : n.message);
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
  add("Commit", ShortCommit(n.commit));
  return facts;
}

std::string DumpPayload(const nlohmann::json& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tr::reconciler::notify
