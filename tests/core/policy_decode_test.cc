#include "core/policy_decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fmt/format.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using testing::ElementsAre;
using testing::ElementsAreArray;
using testing::IsEmpty;

struct PolicyDecode {
  PolicyOverrides policy;
  std::vector<std::string> diagnostics;
};

// Decodes the mapping under `policy:` in `yaml` (a document "policy: ...").
PolicyDecode DecodeText(const std::string& yaml, const ValidationOptions& options = {}) {
  ParsedYaml parsed = ParseStrictYaml("p.yaml", yaml);
  if (!parsed.root) return {{}, DiagnosticStrings(parsed.diagnostics)};
  DecodeContext ctx("p.yaml");
  MappingReader root(RootField(ctx, *parsed.root), {"policy"});
  PolicyOverrides policy = DecodePolicy(root.Required("policy"), options);
  return {policy, DiagnosticStrings(ctx.TakeDiagnostics())};
}

std::string PolicyAt(int line, int column, std::string_view path, std::string_view message) {
  return fmt::format("p.yaml:{}:{}: {}: {}", line, column, path, message);
}

TEST(PolicyDecodeTest, SetsOnlyTheKeysWritten) {
  PolicyDecode d = DecodeText("policy: {settle: 0s, paused: true}\n");
  EXPECT_THAT(d.diagnostics, IsEmpty());
  EXPECT_EQ(d.policy.settle, seconds(0));
  EXPECT_EQ(d.policy.paused, true);
  EXPECT_FALSE(d.policy.max_parallel_workers.has_value());
  EXPECT_FALSE(d.policy.windows.has_value());
  EXPECT_FALSE(d.policy.health_checks.has_value());
  EXPECT_FALSE(d.policy.upgrade_order.has_value());
  EXPECT_FALSE(d.policy.drain_timeout.has_value());
  EXPECT_FALSE(d.policy.drain_on_timeout.has_value());
}

TEST(PolicyDecodeTest, DrainKeysMergeOneByOne) {
  // reconciler.yaml forces by default; a profile shortens the timeout and keeps that.
  PolicyDecode defaults = DecodeText("policy: {drain: {onTimeout: force}}\n");
  PolicyDecode profile = DecodeText("policy:\n  drain:\n    timeout: 2m\n");
  ASSERT_THAT(defaults.diagnostics, IsEmpty());
  ASSERT_THAT(profile.diagnostics, IsEmpty());
  EXPECT_FALSE(profile.policy.drain_on_timeout.has_value());
  const Policy merged = MergePolicy(MergePolicy(Policy{}, defaults.policy), profile.policy);
  EXPECT_EQ(merged.drain.timeout, minutes(2));
  EXPECT_EQ(merged.drain.on_timeout, DrainTimeoutAction::kForce);
  // Nothing written: no timeout of its own (the daemon's --drain-timeout), and halt.
  EXPECT_FALSE(Policy{}.drain.timeout.has_value());
  EXPECT_EQ(Policy{}.drain.on_timeout, DrainTimeoutAction::kHalt);
}

TEST(PolicyDecodeTest, InstallTimingIsInWindowUnlessAheadIsWritten) {
  EXPECT_EQ(Policy{}.install, InstallTiming::kInWindow);
  PolicyDecode ahead = DecodeText("policy: {install: ahead}\n");
  ASSERT_THAT(ahead.diagnostics, IsEmpty());
  EXPECT_EQ(MergePolicy(Policy{}, ahead.policy).install, InstallTiming::kAhead);
  // A profile that writes nothing keeps reconciler.yaml's choice.
  PolicyDecode silent = DecodeText("policy: {paused: false}\n");
  EXPECT_EQ(MergePolicy(MergePolicy(Policy{}, ahead.policy), silent.policy).install,
            InstallTiming::kAhead);
  PolicyDecode wrong = DecodeText("policy: {install: early}\n");
  ASSERT_EQ(wrong.diagnostics.size(), 1u);
  EXPECT_NE(wrong.diagnostics[0].find("policy.install"), std::string::npos) << wrong.diagnostics[0];
  EXPECT_NE(wrong.diagnostics[0].find("ahead"), std::string::npos) << wrong.diagnostics[0];
}

TEST(PolicyDecodeTest, DecodesEveryKey) {
  PolicyDecode d = DecodeText(R"(policy:
  maxParallelWorkers: 3
  nodeTimeout: 45m
  settle: 1m30s
  windows:
    - {days: [mon, Friday, Wed], start: "22:30", duration: 168h, timezone: UTC}
    - days: [Sun]
      start: 00:00
      duration: 1h
      timezone: America/Argentina/Buenos_Aires
  healthChecks:
    - {name: ingress, type: http, url: "https://ingress.example.com/healthz"}
    - name: api-errors
      type: prometheus
      url: http://prometheus.monitoring:9090
      query: sum(rate(apiserver_request_total{code=~"5.."}[5m]))
      max: 0.5
      timeout: 20s
    - {name: teapot, type: http, url: "http://10.0.0.5:8080/", expectStatus: 418, timeout: 1s}
  etcdSnapshot: false
  onFailure: rollback
  paused: false
  allowDowngrade: true
  upgradeOrder: kubernetes-first
  drain: {timeout: 90s, onTimeout: force}
)");
  EXPECT_THAT(d.diagnostics, IsEmpty());
  const PolicyOverrides& p = d.policy;
  EXPECT_EQ(p.max_parallel_workers, 3);
  EXPECT_EQ(p.node_timeout, minutes(45));
  EXPECT_EQ(p.settle, seconds(90));
  ASSERT_TRUE(p.windows.has_value());
  ASSERT_EQ(p.windows->size(), 2u);
  EXPECT_THAT((*p.windows)[0].days, ElementsAre(1, 3, 5));
  EXPECT_EQ((*p.windows)[0].start, minutes(22 * 60 + 30));
  EXPECT_EQ((*p.windows)[0].duration, minutes(7 * 24 * 60));
  EXPECT_EQ((*p.windows)[0].timezone, "UTC");
  EXPECT_THAT((*p.windows)[1].days, ElementsAre(0));
  EXPECT_EQ((*p.windows)[1].start, minutes(0));
  EXPECT_EQ((*p.windows)[1].timezone, "America/Argentina/Buenos_Aires");
  ASSERT_TRUE(p.health_checks.has_value());
  ASSERT_EQ(p.health_checks->size(), 3u);
  const HealthCheck& http = (*p.health_checks)[0];
  EXPECT_EQ(http.name, "ingress");
  ASSERT_TRUE(std::holds_alternative<HttpCheck>(http.spec));
  EXPECT_EQ(std::get<HttpCheck>(http.spec).endpoint.url, "https://ingress.example.com/healthz");
  EXPECT_EQ(std::get<HttpCheck>(http.spec).expect_status, 200);
  EXPECT_EQ(http.timeout, seconds(10));
  const HealthCheck& prom = (*p.health_checks)[1];
  ASSERT_TRUE(std::holds_alternative<PrometheusCheck>(prom.spec));
  EXPECT_EQ(std::get<PrometheusCheck>(prom.spec).query,
            "sum(rate(apiserver_request_total{code=~\"5..\"}[5m]))");
  EXPECT_EQ(std::get<PrometheusCheck>(prom.spec).max_value, 0.5);
  EXPECT_EQ(prom.timeout, seconds(20));
  EXPECT_EQ(std::get<HttpCheck>((*p.health_checks)[2].spec).expect_status, 418);
  EXPECT_EQ((*p.health_checks)[2].timeout, seconds(1));
  EXPECT_EQ(p.etcd_snapshot, false);
  EXPECT_EQ(p.on_failure, FailureAction::kRollback);
  EXPECT_EQ(p.paused, false);
  EXPECT_EQ(p.allow_downgrade, true);
  EXPECT_EQ(p.upgrade_order, UpgradeOrder::kKubernetesFirst);
  EXPECT_EQ(p.drain_timeout, seconds(90));
  EXPECT_EQ(p.drain_on_timeout, DrainTimeoutAction::kForce);
}

struct PolicyCase {
  std::string name;
  std::string yaml;
  std::vector<std::string> diagnostics;
};

class PolicyRuleTest : public testing::TestWithParam<PolicyCase> {};

TEST_P(PolicyRuleTest, ReportsExactly) {
  EXPECT_THAT(DecodeText(GetParam().yaml).diagnostics, ElementsAreArray(GetParam().diagnostics));
}

constexpr std::string_view kWindow = "policy:\n  windows:\n    - ";
std::string Window(std::string_view body) {
  return std::string(kWindow) + std::string(body) + "\n";
}
constexpr std::string_view kCheck = "policy:\n  healthChecks:\n    - ";
std::string Check(std::string_view body) { return std::string(kCheck) + std::string(body) + "\n"; }

const PolicyCase kPolicyCases[] = {
    {"NotAMapping", "policy: [a]\n", {PolicyAt(1, 9, "policy", "must be a mapping, not a list")}},
    {"UnknownKey",
     "policy: {maxParallel: 2}\n",
     {PolicyAt(1, 10, "policy.maxParallel",
         "unknown key \"maxParallel\" (did you mean \"maxParallelWorkers\"?)")}},
    {"TooManyWorkers",
     "policy: {maxParallelWorkers: 1001}\n",
     {PolicyAt(1, 30, "policy.maxParallelWorkers", "must be at most 1000")}},
    {"WindowsNotList",
     "policy: {windows: Sat}\n",
     {PolicyAt(1, 19, "policy.windows", "must be a list, not a string")}},
    {"WindowMissingEverything",
     Window("{}"),
     {PolicyAt(3, 7, "policy.windows[0].days", "is required"),
      PolicyAt(3, 7, "policy.windows[0].start", "is required"),
      PolicyAt(3, 7, "policy.windows[0].duration", "is required"),
      PolicyAt(3, 7, "policy.windows[0].timezone", "is required")}},
    {"WindowBadDay",
     Window("{days: [Sat, Sonntag], start: \"02:00\", duration: 4h, timezone: UTC}"),
     {PolicyAt(3, 20, "policy.windows[0].days[1]",
         "invalid day \"Sonntag\": want Mon, Tue, Wed, Thu, Fri, Sat or Sun")}},
    {"WindowDayTwice",
     Window("{days: [Sat, saturday], start: \"02:00\", duration: 4h, timezone: UTC}"),
     {PolicyAt(3, 20, "policy.windows[0].days[1]", "Sat is listed twice")}},
    {"WindowNoDays",
     Window("{days: [], start: \"02:00\", duration: 4h, timezone: UTC}"),
     {PolicyAt(3, 14, "policy.windows[0].days", "must list at least one day")}},
    {"WindowDaysString",
     Window("{days: Sat, start: \"02:00\", duration: 4h, timezone: UTC}"),
     {PolicyAt(3, 14, "policy.windows[0].days", "must be a list, not a string")}},
    {"WindowBadStart",
     Window("{days: [Sat], start: \"2am\", duration: 4h, timezone: UTC}"),
     {PolicyAt(3, 28, "policy.windows[0].start",
         "invalid time \"2am\": want HH:MM on a 24-hour clock, e.g. \"02:00\"")}},
    {"WindowStart24",
     Window("{days: [Sat], start: \"24:00\", duration: 4h, timezone: UTC}"),
     {PolicyAt(3, 28, "policy.windows[0].start",
         "invalid time \"24:00\": want HH:MM on a 24-hour clock, e.g. \"02:00\"")}},
    {"WindowZeroLength",
     Window("{days: [Sat], start: \"02:00\", duration: 0m, timezone: UTC}"),
     {PolicyAt(3, 47, "policy.windows[0].duration", "must be longer than zero")}},
    {"WindowTooLong",
     Window("{days: [Sat], start: \"02:00\", duration: 169h, timezone: UTC}"),
     {PolicyAt(3, 47, "policy.windows[0].duration", "must be at most 7 days (168h)")}},
    {"WindowSeconds",
     Window("{days: [Sat], start: \"02:00\", duration: 90s, timezone: UTC}"),
     {PolicyAt(3, 47, "policy.windows[0].duration", "must be whole minutes")}},
    {"WindowBadTimezone",
     Window("{days: [Sat], start: \"02:00\", duration: 4h, timezone: \"+02:00\"}"),
     {PolicyAt(3, 61, "policy.windows[0].timezone",
         "must be an IANA time-zone name such as UTC or Europe/Oslo")}},
    {"WindowTimezoneTraversal",
     Window("{days: [Sat], start: \"02:00\", duration: 4h, timezone: ../../etc/passwd}"),
     {PolicyAt(3, 61, "policy.windows[0].timezone",
         "must be an IANA time-zone name such as UTC or Europe/Oslo")}},
    {"CheckMissingEverything",
     Check("{}"),
     {PolicyAt(3, 7, "policy.healthChecks[0].name", "is required"),
      PolicyAt(3, 7, "policy.healthChecks[0].type", "is required"),
      PolicyAt(3, 7, "policy.healthChecks[0].url", "is required")}},
    {"CheckBadType",
     Check("{name: a, type: tcp, url: \"http://x\"}"),
     {PolicyAt(3, 23, "policy.healthChecks[0].type", "must be http, prometheus or kubernetes")}},
    {"CheckBadName",
     Check("{name: \"a b\", type: http, url: \"http://x\"}"),
     {PolicyAt(3, 14, "policy.healthChecks[0].name", "must be 1-63 letters, digits, '.', '_' or '-'")}},
    {"CheckBadUrl",
     Check("{name: a, type: http, url: \"ftp://x\"}"),
     {PolicyAt(3, 34, "policy.healthChecks[0].url",
         "must be an http:// or https:// URL with a host and no spaces")}},
    {"CheckUrlSpace",
     Check("{name: a, type: http, url: \"http://x/a b\"}"),
     {PolicyAt(3, 34, "policy.healthChecks[0].url",
         "must be an http:// or https:// URL with a host and no spaces")}},
    {"CheckUrlNoHost",
     Check("{name: a, type: http, url: \"http:///x\"}"),
     {PolicyAt(3, 34, "policy.healthChecks[0].url",
         "must be an http:// or https:// URL with a host and no spaces")}},
    {"CheckStatusRange",
     Check("{name: a, type: http, url: \"http://x\", expectStatus: 99}"),
     {PolicyAt(3, 60, "policy.healthChecks[0].expectStatus", "must be at least 100")}},
    {"CheckHttpWithQuery",
     Check("{name: a, type: http, url: \"http://x\", query: up, max: 1}"),
     {PolicyAt(3, 53, "policy.healthChecks[0].query", "only applies to type prometheus"),
      PolicyAt(3, 62, "policy.healthChecks[0].max", "only applies to type prometheus")}},
    {"CheckPrometheusWithStatus",
     Check("{name: a, type: prometheus, url: \"http://x\", query: up, expectStatus: 200}"),
     {PolicyAt(3, 77, "policy.healthChecks[0].expectStatus", "only applies to type http")}},
    {"CheckPrometheusNoQuery",
     Check("{name: a, type: prometheus, url: \"http://x\"}"),
     {PolicyAt(3, 7, "policy.healthChecks[0].query", "is required")}},
    {"CheckPrometheusEmptyQuery",
     Check("{name: a, type: prometheus, url: \"http://x\", query: \"\"}"),
     {PolicyAt(3, 59, "policy.healthChecks[0].query", "must not be empty")}},
    {"CheckPrometheusBadMax",
     Check("{name: a, type: prometheus, url: \"http://x\", query: up, max: lots}"),
     {PolicyAt(3, 68, "policy.healthChecks[0].max", "must be a number")}},
    {"CheckZeroTimeout",
     Check("{name: a, type: http, url: \"http://x\", timeout: 0s}"),
     {PolicyAt(3, 55, "policy.healthChecks[0].timeout", "must be longer than zero")}},
    {"CheckDuplicateName",
     "policy:\n  healthChecks:\n    - {name: a, type: http, url: \"http://x\"}\n"
     "    - {name: a, type: http, url: \"http://y\"}\n",
     {PolicyAt(4, 14, "policy.healthChecks[1].name",
         "health check \"a\" is already defined at policy.healthChecks[0]")}},
    {"DrainNotAMapping",
     "policy: {drain: [halt]}\n",
     {PolicyAt(1, 17, "policy.drain", "must be a mapping, not a list")}},
    {"DrainUnknownKey",
     "policy: {drain: {onTimout: halt}}\n",
     {PolicyAt(1, 18, "policy.drain.onTimout",
         "unknown key \"onTimout\" (did you mean \"onTimeout\"?)")}},
    {"DrainBadAction",
     "policy: {drain: {onTimeout: evict}}\n",
     {PolicyAt(1, 29, "policy.drain.onTimeout", "must be halt or force")}},
    {"DrainZeroTimeout",
     "policy: {drain: {timeout: 0s}}\n",
     {PolicyAt(1, 27, "policy.drain.timeout", "must be longer than zero")}},
    {"DrainTimeoutOverADay",
     "policy:\n  drain:\n    timeout: 25h\n",
     {PolicyAt(3, 14, "policy.drain.timeout", "must be at most 24h")}},
};

INSTANTIATE_TEST_SUITE_P(Cases, PolicyRuleTest, testing::ValuesIn(kPolicyCases),
                         [](const testing::TestParamInfo<PolicyCase>& param_info) {
                           return param_info.param.name;
                         });

TEST(PolicyDecodeTest, AsksWhetherTheTimeZoneExistsWhenTold) {
  ValidationOptions options;
  std::vector<std::string> asked;
  options.is_known_timezone = [&asked](std::string_view name) {
    asked.emplace_back(name);
    return name == "Europe/Oslo";
  };
  const std::string yaml =
      "policy:\n  windows:\n"
      "    - {days: [Sat], start: \"02:00\", duration: 4h, timezone: Europe/Oslo}\n"
      "    - {days: [Sat], start: \"02:00\", duration: 4h, timezone: Mars/Olympus_Mons}\n";
  PolicyDecode d = DecodeText(yaml, options);
  EXPECT_THAT(asked, ElementsAre("Europe/Oslo", "Mars/Olympus_Mons"));
  EXPECT_THAT(d.diagnostics, ElementsAre(PolicyAt(4, 61, "policy.windows[1].timezone",
                                            "unknown time zone \"Mars/Olympus_Mons\"")));
  EXPECT_FALSE(d.policy.windows.has_value());
}

}  // namespace
}  // namespace tr::core
