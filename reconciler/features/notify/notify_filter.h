// Which notifications a receiver wants: `--notify` keys `event=`, `cluster=`, `label=` and
// `min-severity=`, so that an on-call channel gets failures only, or a team only its clusters.
// Keys of one kind are alternatives (any `event=`, any `cluster=`), kinds must all hold, and
// every `label=` must hold (as a Kubernetes equality selector does). No key: everything.
//
// Values and pure functions; thread-compatible.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "reconciler/features/notify/notification.h"

namespace tr::reconciler::notify {

// InvalidArgument "--notify: <why>": how every problem of a --notify flag is reported.
absl::Status NotifyFlagError(const std::string& why);

// How much an event asks for attention: info (started, node upgraded, completed), warning
// (blocked, waiting for a gate), error (failed).
enum class Severity { kInfo, kWarning, kError };
Severity SeverityOf(NotificationEvent event);

struct NotifyFilter {
  std::set<NotificationEvent> events;         // empty: every event
  std::vector<std::string> cluster_patterns;  // `*` matches any run of characters; empty: all
  std::map<std::string, std::string> labels;  // every one must be the cluster's
  Severity min_severity = Severity::kInfo;

  bool Accepts(const Notification& n) const;
  // Takes one `--notify` key of the filter: true when `key` is one (and `value` was valid,
  // else `error` says why); false when it is no filter key.
  bool Take(std::string_view key, std::string_view value, absl::Status& error);
};

// The filter keys, for messages: "event, cluster, label, min-severity".
inline constexpr std::string_view kNotifyFilterKeys = "event, cluster, label, min-severity";

// Whether `name` matches `pattern`, where `*` stands for any run of characters.
bool MatchesPattern(std::string_view pattern, std::string_view name);

}  // namespace tr::reconciler::notify
