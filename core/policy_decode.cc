#include "core/policy_decode.h"

#include <algorithm>
#include <map>

#include "core/duration.h"
#include "core/names.h"
#include "fmt/format.h"

namespace tr::core {

std::optional<std::string> DecodeTimezone(const Field& field, const ValidationOptions& options) {
  std::optional<std::string> name = ReadString(field);
  if (!name) return std::nullopt;
  if (absl::Status s = CheckTimezoneName(*name); !s.ok()) {
    field.Error(std::string(s.message()));
    return std::nullopt;
  }
  if (options.is_known_timezone && !options.is_known_timezone(*name)) {
    field.Error(fmt::format("unknown time zone \"{}\"", *name));
    return std::nullopt;
  }
  return name;
}

namespace {

constexpr std::chrono::minutes kMaxWindow{7 * 24 * 60};

std::optional<std::vector<int>> DecodeDays(const Field& field) {
  std::vector<Field> items = ReadList(field);
  if (!field.present() || !field.node->IsSequence()) return std::nullopt;
  if (items.empty()) {
    field.Error("must list at least one day");
    return std::nullopt;
  }
  std::vector<int> days;
  bool ok = true;
  for (const Field& item : items) {
    std::optional<std::string> text = ReadString(item);
    if (!text) {
      ok = false;
      continue;
    }
    absl::StatusOr<int> day = ParseWeekday(*text);
    if (!day.ok()) {
      item.Error(std::string(day.status().message()));
      ok = false;
    } else if (std::find(days.begin(), days.end(), *day) != days.end()) {
      item.Error(fmt::format("{} is listed twice", WeekdayName(*day)));
      ok = false;
    } else {
      days.push_back(*day);
    }
  }
  if (!ok) return std::nullopt;
  std::sort(days.begin(), days.end());
  return days;
}

std::optional<std::chrono::minutes> DecodeWindowLength(const Field& field) {
  std::optional<std::chrono::seconds> d = ReadDuration(field, /*allow_zero=*/false);
  if (!d) return std::nullopt;
  if (d->count() % 60 != 0) {
    field.Error("must be whole minutes");
    return std::nullopt;
  }
  const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(*d);
  if (minutes > kMaxWindow) {
    field.Error("must be at most 7 days (168h)");
    return std::nullopt;
  }
  return minutes;
}

std::optional<MaintenanceWindow> DecodeWindow(const Field& field,
                                              const ValidationOptions& options) {
  MappingReader m(field, {"days", "start", "duration", "timezone"});
  if (!m.ok()) return std::nullopt;
  std::optional<std::vector<int>> days = DecodeDays(m.Required("days"));
  std::optional<std::chrono::minutes> start;
  const Field start_field = m.Required("start");
  if (std::optional<std::string> text = ReadString(start_field)) {
    absl::StatusOr<std::chrono::minutes> t = ParseTimeOfDay(*text);
    if (t.ok()) {
      start = *t;
    } else {
      start_field.Error(std::string(t.status().message()));
    }
  }
  std::optional<std::chrono::minutes> duration = DecodeWindowLength(m.Required("duration"));
  std::optional<std::string> timezone = DecodeTimezone(m.Required("timezone"), options);
  if (!days || !start || !duration || !timezone) return std::nullopt;
  return MaintenanceWindow{
      .days = *days, .start = *start, .duration = *duration, .timezone = *timezone};
}

template <typename T, typename DecodeItem>
std::optional<std::vector<T>> DecodeEach(const Field& field, DecodeItem decode_item) {
  std::vector<Field> items = ReadList(field);
  if (!field.node->IsSequence()) return std::nullopt;
  std::vector<T> out;
  bool ok = true;
  for (const Field& item : items) {
    std::optional<T> value = decode_item(item);
    if (value) {
      out.push_back(*std::move(value));
    } else {
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<HealthCheck>> DecodeHealthChecks(const Field& field) {
  std::vector<Field> items = ReadList(field);
  if (!field.node->IsSequence()) return std::nullopt;
  std::vector<HealthCheck> checks;
  std::map<std::string, size_t> seen;
  bool ok = true;
  for (size_t i = 0; i < items.size(); ++i) {
    std::optional<HealthCheck> check = DecodeHealthCheck(items[i]);
    if (!check) {
      ok = false;
      continue;
    }
    auto [it, inserted] = seen.emplace(check->name, i);
    if (!inserted) {
      const Field name{.ctx = items[i].ctx,
                       .node = items[i].node->Find("name"),
                       .path = JoinPath(items[i].path, "name"),
                       .mark = items[i].node->mark};
      name.Error(fmt::format("health check \"{}\" is already defined at {}", it->first,
                             JoinPath(field.path, it->second)));
      ok = false;
      continue;
    }
    checks.push_back(*std::move(check));
  }
  if (!ok) return std::nullopt;
  return checks;
}

// `drain: {timeout, onTimeout}`: each key merges on its own, as the other policy keys do.
void DecodeDrain(const Field& field, PolicyOverrides& p) {
  MappingReader m(field, {"timeout", "onTimeout"});
  if (!m.ok()) return;
  const Field timeout = m.Optional("timeout");
  p.drain_timeout = ReadDuration(timeout, /*allow_zero=*/false);
  // As --drain-timeout: a day is already far past any budget that will ever free up.
  if (p.drain_timeout && *p.drain_timeout > std::chrono::hours(24)) {
    timeout.Error("must be at most 24h");
    p.drain_timeout.reset();
  }
  p.drain_on_timeout = ReadEnum<DrainTimeoutAction>(
      m.Optional("onTimeout"),
      {{"halt", DrainTimeoutAction::kHalt}, {"force", DrainTimeoutAction::kForce}});
}

}  // namespace

PolicyOverrides DecodePolicy(const Field& field, const ValidationOptions& options) {
  PolicyOverrides p;
  MappingReader m(field, {"maxParallelWorkers", "nodeTimeout", "settle", "windows", "healthChecks",
                          "etcdSnapshot", "onFailure", "paused", "allowDowngrade", "upgradeOrder",
                          "gateTimeout", "drain", "install"});
  if (!m.ok()) return p;
  if (std::optional<int64_t> n = ReadInteger(m.Optional("maxParallelWorkers"), 1, 1000)) {
    p.max_parallel_workers = static_cast<int>(*n);
  }
  p.node_timeout = ReadDuration(m.Optional("nodeTimeout"), /*allow_zero=*/false);
  p.settle = ReadDuration(m.Optional("settle"), /*allow_zero=*/true);
  p.gate_timeout = ReadDuration(m.Optional("gateTimeout"), /*allow_zero=*/false);
  if (const Field f = m.Optional("windows"); f.present()) {
    p.windows = DecodeEach<MaintenanceWindow>(
        f, [&options](const Field& item) { return DecodeWindow(item, options); });
  }
  if (const Field f = m.Optional("healthChecks"); f.present()) {
    p.health_checks = DecodeHealthChecks(f);
  }
  p.etcd_snapshot = ReadBool(m.Optional("etcdSnapshot"));
  p.on_failure = ReadEnum<FailureAction>(
      m.Optional("onFailure"),
      {{"halt", FailureAction::kHalt}, {"rollback", FailureAction::kRollback}});
  p.paused = ReadBool(m.Optional("paused"));
  p.allow_downgrade = ReadBool(m.Optional("allowDowngrade"));
  p.upgrade_order = ReadEnum<UpgradeOrder>(m.Optional("upgradeOrder"),
                                           {{"talos-first", UpgradeOrder::kTalosFirst},
                                            {"kubernetes-first", UpgradeOrder::kKubernetesFirst}});
  if (const Field f = m.Optional("drain"); f.present()) DecodeDrain(f, p);
  p.install = ReadEnum<InstallTiming>(
      m.Optional("install"), {{"inWindow", InstallTiming::kInWindow}, {"ahead", InstallTiming::kAhead}});
  return p;
}

}  // namespace tr::core
