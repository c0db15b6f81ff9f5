#include "core/update_policy.h"

#include <charconv>

#include "core/duration.h"
#include "core/text.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

bool ReadNumber(std::string_view text, int& out) {
  if (text.empty() || text.size() > 4) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// The words of `text` between spaces.
std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  for (std::string_view word : Split(text, ' ')) {
    if (!word.empty()) words.push_back(word);
  }
  return words;
}

// Sets the bits of `field` (one cron field) in `bits`, values in [low, high].
template <size_t N>
absl::Status ReadCronField(std::string_view field, std::string_view name, int low, int high,
                           std::bitset<N>& bits) {
  const auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format("{} field \"{}\": {}", name, field, why));
  };
  for (std::string_view part : Split(field, ',')) {
    int step = 1;
    if (const size_t slash = part.find('/'); slash != std::string_view::npos) {
      if (!ReadNumber(part.substr(slash + 1), step) || step < 1) return bad("bad step");
      part = part.substr(0, slash);
    }
    int first = low;
    int last = high;
    if (part != "*") {
      const size_t dash = part.find('-');
      if (dash == std::string_view::npos) {
        if (!ReadNumber(part, first)) return bad("not a number, range or *");
        last = step > 1 ? high : first;
      } else if (!ReadNumber(part.substr(0, dash), first) ||
                 !ReadNumber(part.substr(dash + 1), last)) {
        return bad("bad range");
      }
    }
    if (first < low || last > high || first > last) {
      return bad(fmt::format("values must be within {}-{}", low, high));
    }
    for (int v = first; v <= last; v += step) bits.set(static_cast<size_t>(v));
  }
  return absl::OkStatus();
}

}  // namespace

const char* UpdateLevelName(UpdateLevel level) {
  switch (level) {
    case UpdateLevel::kNone:
      return "none";
    case UpdateLevel::kPatch:
      return "patch";
    case UpdateLevel::kMinor:
      return "minor";
  }
  return "none";
}

absl::StatusOr<VersionMatcher> VersionMatcher::Parse(std::string_view text) {
  VersionMatcher matcher;
  matcher.text_ = std::string(text);
  if (text.ends_with(".x") || text.ends_with(".*")) {
    absl::StatusOr<MinorVersion> minor = ParseMinorVersion(text.substr(0, text.size() - 2));
    if (!minor.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("\"{}\": a whole minor is written 1.13.x", text));
    }
    Version start;
    start.major = minor->major;
    start.minor = minor->minor;
    Version next = start;
    next.minor += 1;
    matcher.comparators_ = {{Op::kGe, start}, {Op::kLt, next}};
    return matcher;
  }
  for (std::string_view word : Words(text)) {
    Op op = Op::kEq;
    for (const auto& [spelling, candidate] :
         {std::pair{">=", Op::kGe}, std::pair{"<=", Op::kLe}, std::pair{">", Op::kGt},
          std::pair{"<", Op::kLt}, std::pair{"=", Op::kEq}}) {
      if (word.starts_with(spelling)) {
        op = candidate;
        word.remove_prefix(std::string_view(spelling).size());
        break;
      }
    }
    absl::StatusOr<Version> version = ParseKubernetesVersion(word);
    if (!version.ok()) {
      return absl::InvalidArgumentError(fmt::format(
          "\"{}\": write a version (1.12.3), a minor (1.13.x) or comparators (>=1.13.0 <1.13.4)",
          text));
    }
    matcher.comparators_.emplace_back(op, *version);
  }
  if (matcher.comparators_.empty()) return absl::InvalidArgumentError("must not be empty");
  return matcher;
}

bool VersionMatcher::Matches(const Version& version) const {
  for (const auto& [op, bound] : comparators_) {
    const std::strong_ordering order = version <=> bound;
    bool holds = false;
    switch (op) {
      case Op::kEq:
        holds = order == 0;
        break;
      case Op::kLt:
        holds = order < 0;
        break;
      case Op::kLe:
        holds = order <= 0;
        break;
      case Op::kGt:
        holds = order > 0;
        break;
      case Op::kGe:
        holds = order >= 0;
        break;
    }
    if (!holds) return false;
  }
  return true;
}

absl::StatusOr<CronSchedule> CronSchedule::Parse(std::string_view text) {
  std::vector<std::string_view> fields = Words(text);
  if (fields.size() != 5) {
    return absl::InvalidArgumentError(fmt::format(
        "\"{}\": a cron expression has five fields: minute hour day-of-month month day-of-week",
        text));
  }
  CronSchedule cron;
  cron.text_ = std::string(text);
  std::bitset<8> weekdays;
  for (absl::Status s : {ReadCronField(fields[0], "minute", 0, 59, cron.minutes_),
                         ReadCronField(fields[1], "hour", 0, 23, cron.hours_),
                         ReadCronField(fields[2], "day-of-month", 1, 31, cron.days_of_month_),
                         ReadCronField(fields[3], "month", 1, 12, cron.months_),
                         ReadCronField(fields[4], "day-of-week", 0, 7, weekdays)}) {
    if (!s.ok()) return s;
  }
  for (size_t day = 0; day < 7; ++day) cron.weekdays_[day] = weekdays[day];
  if (weekdays[7]) cron.weekdays_.set(0);  // 7 is Sunday too
  cron.days_of_month_any_ = fields[2] == "*";
  cron.weekdays_any_ = fields[4] == "*";
  return cron;
}

bool CronSchedule::Matches(const LocalMinute& at) const {
  if (!minutes_.test(static_cast<size_t>(at.minute)) ||
      !hours_.test(static_cast<size_t>(at.hour)) || !months_.test(static_cast<size_t>(at.month))) {
    return false;
  }
  const bool dom = days_of_month_.test(static_cast<size_t>(at.day_of_month));
  const bool dow = weekdays_.test(static_cast<size_t>(at.weekday));
  if (!days_of_month_any_ && !weekdays_any_) return dom || dow;
  return dom && dow;
}

UpdatePolicy MergeUpdatePolicy(UpdatePolicy base, const UpdatePolicyOverrides& overrides) {
  if (overrides.talos) base.talos = *overrides.talos;
  if (overrides.kubernetes) base.kubernetes = *overrides.kubernetes;
  if (overrides.schedule) base.schedule = *overrides.schedule;
  if (overrides.ignore) base.ignore = *overrides.ignore;
  if (overrides.minimum_release_age) base.minimum_release_age = *overrides.minimum_release_age;
  if (overrides.group) base.group = *overrides.group;
  return base;
}

bool IsIgnored(const UpdatePolicy& policy, const Version& version) {
  for (const VersionMatcher& m : policy.ignore) {
    if (m.Matches(version)) return true;
  }
  return false;
}

absl::StatusOr<std::chrono::seconds> ParseReleaseAge(std::string_view text) {
  const size_t d = text.find('d');
  if (d == std::string_view::npos) return ParseDuration(text);
  int days = 0;
  if (!ReadNumber(text.substr(0, d), days) || days < 0 || days > 3650) {
    return absl::InvalidArgumentError(
        fmt::format("\"{}\": write days as 7d (at most 3650d), optionally followed by 12h", text));
  }
  std::chrono::seconds rest{0};
  if (d + 1 < text.size()) {
    absl::StatusOr<std::chrono::seconds> parsed = ParseDuration(text.substr(d + 1));
    if (!parsed.ok()) return parsed.status();
    rest = *parsed;
  }
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::days(days)) + rest;
}

}  // namespace tr::core
