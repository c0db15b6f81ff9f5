// The release-proposal policy (`updates:` in reconciler.yaml, overridable per profile in
// spec.updates): which Talos and Kubernetes releases the reconciler may propose as pull
// requests, when, and which clusters share one pull request. docs/proposals.md lists the rules.
//
// Pure; thread-compatible.
#pragma once

#include <bitset>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/version.h"

namespace tr::core {

// How far a proposal may move a component: not at all, to the newest patch of its minor, or
// to the next minor.
enum class UpdateLevel { kNone, kPatch, kMinor };
const char* UpdateLevelName(UpdateLevel level);  // "none" | "patch" | "minor"

// One `ignore` entry: an exact version ("1.12.3"), a whole minor ("1.13.x"), or comparators
// that must all hold (">=1.13.0 <1.13.4"; operators >=, >, <=, <, =).
class VersionMatcher {
 public:
  // InvalidArgument with a reason a person can act on.
  static absl::StatusOr<VersionMatcher> Parse(std::string_view text);
  bool Matches(const Version& version) const;
  const std::string& text() const { return text_; }

 private:
  enum class Op { kEq, kLt, kLe, kGt, kGe };
  std::string text_;
  std::vector<std::pair<Op, Version>> comparators_;
};

// A minute of local time, as a cron expression sees it.
struct LocalMinute {
  int minute = 0;        // 0-59
  int hour = 0;          // 0-23
  int day_of_month = 1;  // 1-31
  int month = 1;         // 1-12
  int weekday = 0;       // 0 = Sunday ... 6 = Saturday
};

// A standard five-field cron expression (minute hour day-of-month month day-of-week) with
// `*`, lists, ranges and steps ("*/15", "1-5", "0,30"); day-of-week 0-7 (0 and 7 are
// Sunday). As in cron, when both day fields are restricted a day matching either matches.
class CronSchedule {
 public:
  static absl::StatusOr<CronSchedule> Parse(std::string_view text);
  bool Matches(const LocalMinute& at) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_of_month_;
  std::bitset<13> months_;
  std::bitset<7> weekdays_;
  bool days_of_month_any_ = true;
  bool weekdays_any_ = true;
};

struct UpdateSchedule {
  CronSchedule cron;
  std::string timezone = "UTC";  // IANA name
};

struct UpdatePolicy {
  UpdateLevel talos = UpdateLevel::kNone;
  UpdateLevel kubernetes = UpdateLevel::kNone;
  // When proposals are made: at the minutes the expression names. Unset: at every pass.
  std::optional<UpdateSchedule> schedule;
  std::vector<VersionMatcher> ignore;  // releases never proposed
  // A release is proposed only once the reconciler has known it this long.
  std::chrono::seconds minimum_release_age{0};
  // The clusters proposed together; empty: the cluster's promotion chain.
  std::string group;
};

struct UpdatePolicyOverrides {
  std::optional<UpdateLevel> talos;
  std::optional<UpdateLevel> kubernetes;
  std::optional<UpdateSchedule> schedule;
  std::optional<std::vector<VersionMatcher>> ignore;
  std::optional<std::chrono::seconds> minimum_release_age;
  std::optional<std::string> group;
};

// `base` with every field `overrides` sets replaced.
UpdatePolicy MergeUpdatePolicy(UpdatePolicy base, const UpdatePolicyOverrides& overrides);

// True when `version` is ignored by `policy`.
bool IsIgnored(const UpdatePolicy& policy, const Version& version);

// A release age: an optional number of days followed by a duration (duration.h), or days
// alone: "7d", "36h", "1d12h", "0s". InvalidArgument otherwise.
absl::StatusOr<std::chrono::seconds> ParseReleaseAge(std::string_view text);

}  // namespace tr::core
