#include "core/update_policy_decode.h"

#include "core/names.h"
#include "core/policy_decode.h"

namespace tr::core {
namespace {

std::optional<UpdateLevel> DecodeLevel(const Field& field) {
  return ReadEnum<UpdateLevel>(field, {{"none", UpdateLevel::kNone},
                                       {"patch", UpdateLevel::kPatch},
                                       {"minor", UpdateLevel::kMinor}});
}

std::optional<UpdateSchedule> DecodeSchedule(const Field& field, const ValidationOptions& options) {
  MappingReader m(field, {"cron", "timeZone"});
  if (!m.ok()) return std::nullopt;
  UpdateSchedule schedule;
  bool ok = true;
  const Field cron_field = m.Required("cron");
  if (std::optional<std::string> text = ReadString(cron_field)) {
    absl::StatusOr<CronSchedule> cron = CronSchedule::Parse(*text);
    if (cron.ok()) {
      schedule.cron = *std::move(cron);
    } else {
      cron_field.Error(std::string(cron.status().message()));
      ok = false;
    }
  } else {
    ok = false;
  }
  if (const Field tz = m.Optional("timeZone"); tz.present()) {
    std::optional<std::string> name = DecodeTimezone(tz, options);
    if (name) {
      schedule.timezone = *name;
    } else {
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return schedule;
}

std::optional<std::vector<VersionMatcher>> DecodeIgnore(const Field& field) {
  if (!field.present()) return std::nullopt;
  std::vector<VersionMatcher> matchers;
  for (const Field& item : ReadList(field)) {
    std::optional<std::string> text = ReadString(item);
    if (!text) continue;
    absl::StatusOr<VersionMatcher> matcher = VersionMatcher::Parse(*text);
    if (matcher.ok()) {
      matchers.push_back(*std::move(matcher));
    } else {
      item.Error(std::string(matcher.status().message()));
    }
  }
  return matchers;
}

std::optional<std::chrono::seconds> DecodeReleaseAge(const Field& field) {
  std::optional<std::string> text = ReadString(field);
  if (!text) return std::nullopt;
  absl::StatusOr<std::chrono::seconds> age = ParseReleaseAge(*text);
  if (!age.ok()) {
    field.Error(std::string(age.status().message()));
    return std::nullopt;
  }
  return *age;
}

}  // namespace

UpdatePolicyOverrides DecodeUpdatePolicy(const Field& field, const ValidationOptions& options) {
  UpdatePolicyOverrides overrides;
  if (!field.present()) return overrides;
  MappingReader m(field,
                  {"talos", "kubernetes", "schedule", "ignore", "minimumReleaseAge", "group"});
  if (!m.ok()) return overrides;
  overrides.talos = DecodeLevel(m.Optional("talos"));
  overrides.kubernetes = DecodeLevel(m.Optional("kubernetes"));
  if (const Field schedule = m.Optional("schedule"); schedule.present()) {
    overrides.schedule = DecodeSchedule(schedule, options);
  }
  overrides.ignore = DecodeIgnore(m.Optional("ignore"));
  overrides.minimum_release_age = DecodeReleaseAge(m.Optional("minimumReleaseAge"));
  overrides.group = ReadChecked(m.Optional("group"), CheckDns1123Label);
  return overrides;
}

}  // namespace tr::core
