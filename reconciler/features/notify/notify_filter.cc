#include "reconciler/features/notify/notify_filter.h"

#include <array>

namespace tr::reconciler::notify {
namespace {

constexpr std::array kEvents = {
    NotificationEvent::kRolloutStarted,   NotificationEvent::kNodeUpgraded,
    NotificationEvent::kRolloutCompleted, NotificationEvent::kRolloutFailed,
    NotificationEvent::kRolloutBlocked,   NotificationEvent::kWaitingForGate,
};

std::string EventNames() {
  std::string names;
  for (NotificationEvent e : kEvents)
    names += (names.empty() ? "" : ", ") + std::string(NotificationEventName(e));
  return names;
}

}  // namespace

Severity SeverityOf(NotificationEvent event) {
  switch (event) {
    case NotificationEvent::kRolloutFailed:
      return Severity::kError;
    case NotificationEvent::kRolloutBlocked:
    case NotificationEvent::kWaitingForGate:
      return Severity::kWarning;
    default:
      return Severity::kInfo;
  }
}

bool MatchesPattern(std::string_view pattern, std::string_view name) {
  // Greedy matching with one backtrack point, the last `*` seen.
  size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool NotifyFilter::Accepts(const Notification& n) const {
  if (SeverityOf(n.event) < min_severity) return false;
  if (!events.empty() && !events.contains(n.event)) return false;
  if (!cluster_patterns.empty()) {
    bool any = false;
    for (const std::string& pattern : cluster_patterns)
      any = any || MatchesPattern(pattern, n.cluster);
    if (!any) return false;
  }
  for (const auto& [key, value] : labels) {
    const auto it = n.labels.find(key);
    if (it == n.labels.end() || it->second != value) return false;
  }
  return true;
}

bool NotifyFilter::Take(std::string_view key, std::string_view value, absl::Status& error) {
  if (key == "event") {
    for (NotificationEvent e : kEvents) {
      if (value == NotificationEventName(e)) {
        events.insert(e);
        return true;
      }
    }
    error =
        NotifyFlagError("event=" + std::string(value) + " is no event (want " + EventNames() + ")");
  } else if (key == "cluster") {
    if (value.empty()) error = NotifyFlagError("cluster= needs a name or a pattern such as prod-*");
    cluster_patterns.emplace_back(value);
  } else if (key == "label") {
    const size_t eq = value.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      error = NotifyFlagError("label= needs key=value, as in label=env=prod");
    } else {
      labels[std::string(value.substr(0, eq))] = std::string(value.substr(eq + 1));
    }
  } else if (key == "min-severity") {
    if (value == "info") {
      min_severity = Severity::kInfo;
    } else if (value == "warning") {
      min_severity = Severity::kWarning;
    } else if (value == "error") {
      min_severity = Severity::kError;
    } else {
      error =
          NotifyFlagError("min-severity=" + std::string(value) + " (want info, warning or error)");
    }
  } else {
    return false;
  }
  return true;
}

absl::Status NotifyFlagError(const std::string& why) {
  return absl::InvalidArgumentError("--notify: " + why);
}

}  // namespace tr::reconciler::notify
