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

std::optional<std::string> DecodeCheckName(const Field& field) {
  std::optional<std::string> name = ReadString(field);
  if (!name) return std::nullopt;
  bool ok = !name->empty() && name->size() <= 63;
  for (char c : *name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-');
  }
  if (!ok) field.Error("must be 1-63 letters, digits, '.', '_' or '-'");
  return ok ? name : std::nullopt;
}

std::optional<std::string> DecodeUrl(const Field& field) {
  std::optional<std::string> url = ReadString(field);
  if (!url) return std::nullopt;
  std::string_view rest = *url;
  bool ok = rest.size() <= 2048;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else {
    ok = false;
  }
  ok = ok && !rest.empty() && rest.front() != '/';
  for (char c : rest) ok = ok && static_cast<unsigned char>(c) > 0x20 && c != 0x7F;
  if (!ok) field.Error("must be an http:// or https:// URL with a host and no spaces");
  return ok ? url : std::nullopt;
}

// An absolute path, read by the daemon when it checks (a mounted Secret or ConfigMap).
std::optional<std::string> DecodeCaFile(const Field& field) {
  std::optional<std::string> path = ReadString(field);
  if (!path) return std::nullopt;
  bool ok = path->starts_with("/") && path->size() <= 4096;
  for (char c : *path) ok = ok && static_cast<unsigned char>(c) >= 0x20 && c != 0x7F;
  if (!ok) field.Error("must be an absolute file path");
  return ok ? path : std::nullopt;
}

// The keys only some types may set: reported when set for another type.
void RefuseForeignKeys(const MappingReader& m, HealthCheck::Kind kind) {
  using K = HealthCheck::Kind;
  struct Rule {
    std::string_view key;
    std::vector<K> types;
    const char* message;
  };
  static const Rule kRules[] = {
      {"url", {K::kHttp, K::kPrometheus}, "does not apply to type kubernetes"},
      {"caFile", {K::kHttp, K::kPrometheus}, "does not apply to type kubernetes"},
      {"expectStatus", {K::kHttp}, "only applies to type http"},
      {"query", {K::kPrometheus}, "only applies to type prometheus"},
      {"max", {K::kPrometheus}, "only applies to type prometheus"},
      {"workloads", {K::kKubernetes}, "only applies to type kubernetes"},
  };
  for (const Rule& rule : kRules) {
    const Field f = m.Optional(rule.key);
    if (f.present() && std::find(rule.types.begin(), rule.types.end(), kind) == rule.types.end()) {
      f.Error(rule.message);
    }
  }
}

// "app=ceph", "tier!=test,app" (equality-based); what the Kubernetes API takes as labelSelector.
std::optional<std::string> DecodeLabelSelector(const Field& field) {
  std::optional<std::string> text = ReadString(field);
  if (!text) return std::nullopt;
  bool ok = !text->empty() && text->size() <= 1024;
  for (char c : *text) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                std::string_view("._-/=!,").find(c) != std::string_view::npos);
  }
  if (!ok) field.Error("must be an equality-based label selector such as app=ceph,tier!=test");
  return ok ? text : std::nullopt;
}

// `workloads` of a kubernetes check; false after reporting a problem.
bool DecodeKubernetesKeys(const MappingReader& m, HealthCheck& check) {
  MappingReader w(m.Required("workloads"), {"kind", "namespace", "name", "labelSelector"});
  if (!w.ok()) return false;
  std::optional<std::string> kind = ReadEnum<std::string>(
      w.Required("kind"),
      {{"Deployment", "Deployment"}, {"StatefulSet", "StatefulSet"}, {"DaemonSet", "DaemonSet"}});
  std::optional<std::string> ns = ReadChecked(w.Required("namespace"), CheckDns1123Label);
  std::optional<std::string> name, selector;
  const Field name_field = w.Optional("name"), selector_field = w.Optional("labelSelector");
  bool ok = kind && ns;
  if (name_field.present()) {
    name = ReadChecked(name_field, CheckDns1123Subdomain);
    ok = ok && name;
  }
  if (selector_field.present()) {
    selector = DecodeLabelSelector(selector_field);
    ok = ok && selector;
  }
  if (name_field.present() && selector_field.present()) {
    selector_field.Error("set name or labelSelector, not both");
    ok = false;
  }
  if (!ok) return false;
  check.workload_kind = *kind;
  check.namespace_name = *ns;
  check.workload_name = name.value_or("");
  check.label_selector = selector.value_or("");
  return true;
}

// expectStatus of an http check; false after reporting a problem.
bool DecodeHttpKeys(const MappingReader& m, HealthCheck& check) {
  const Field f = m.Optional("expectStatus");
  if (!f.present()) return true;
  std::optional<int64_t> status = ReadInteger(f, 100, 599);
  if (status) check.expect_status = static_cast<int>(*status);
  return status.has_value();
}

// query and max of a prometheus check; false after reporting a problem.
bool DecodePrometheusKeys(const MappingReader& m, HealthCheck& check) {
  const Field query = m.Required("query");
  std::optional<std::string> text = ReadString(query);
  if (text && text->empty()) query.Error("must not be empty");
  if (!text || text->empty()) return false;
  check.query = *text;
  if (const Field f = m.Optional("max"); f.present()) {
    check.max_value = ReadNumber(f);
    return check.max_value.has_value();
  }
  return true;
}

std::optional<HealthCheck> DecodeHealthCheck(const Field& field) {
  MappingReader m(field, {"name", "type", "url", "caFile", "expectStatus", "query", "max",
                          "workloads", "timeout"});
  if (!m.ok()) return std::nullopt;
  HealthCheck check;
  bool ok = true;
  const auto take = [&ok](auto value, auto& out) {
    if (value) {
      out = *value;
    } else {
      ok = false;
    }
  };
  take(DecodeCheckName(m.Required("name")), check.name);
  take(ReadEnum<HealthCheck::Kind>(
           m.Required("type"),
           {{"http", HealthCheck::Kind::kHttp},
            {"prometheus", HealthCheck::Kind::kPrometheus},
            {"kubernetes", HealthCheck::Kind::kKubernetes}}),
       check.kind);
  if (check.kind != HealthCheck::Kind::kKubernetes) {
    take(DecodeUrl(m.Required("url")), check.url);
    if (const Field f = m.Optional("caFile"); f.present()) take(DecodeCaFile(f), check.ca_file);
  }
  if (const Field f = m.Optional("timeout"); f.present()) {
    take(ReadDuration(f, /*allow_zero=*/false), check.timeout);
  }
  if (!ok) return std::nullopt;
  RefuseForeignKeys(m, check.kind);
  bool typed = false;
  switch (check.kind) {
    case HealthCheck::Kind::kHttp:
      typed = DecodeHttpKeys(m, check);
      break;
    case HealthCheck::Kind::kPrometheus:
      typed = DecodePrometheusKeys(m, check);
      break;
    case HealthCheck::Kind::kKubernetes:
      typed = DecodeKubernetesKeys(m, check);
      break;
  }
  if (!typed) return std::nullopt;
  return check;
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
                          "gateTimeout", "drain"});
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
  return p;
}

}  // namespace tr::core
