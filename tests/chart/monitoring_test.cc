// The chart's monitoring: the alert rules pass `promtool check rules`, `promtool test rules`
// (tests/chart/prometheus-rules-test.yaml) has a case where each alert fires and one where it
// stays silent, the PrometheusRule carries the rule file's groups, the dashboard's queries parse,
// and every metric the rules and the dashboard name is one docs/metrics.md lists (the end-to-end
// RollingUpgrade test compares them with a live /metrics). promtool: package prometheus.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/chart/helm_runner.h"
#include "tests/support/process.h"
#include "yaml-cpp/yaml.h"

namespace tr::chart {
namespace {

namespace fs = std::filesystem;
using gitsource::testing::ProcessResult;
using gitsource::testing::RunCommand;

const fs::path kSourceRoot = TR_SOURCE_DIR;

std::string FileText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path RulesFile() { return ChartDir() / "files/prometheus-rules.yaml"; }
fs::path DashboardFile() { return ChartDir() / "files/grafana-dashboard.json"; }

std::vector<std::string> AlertNames() {
  std::vector<std::string> names;
  for (const YAML::Node& group : YAML::LoadFile(RulesFile().string())["groups"]) {
    for (const YAML::Node& rule : group["rules"]) names.push_back(rule["alert"].as<std::string>());
  }
  return names;
}

// Every `expr` of the dashboard's panels.
std::vector<std::string> DashboardQueries() {
  std::vector<std::string> queries;
  for (const YAML::Node& panel : YAML::LoadFile(DashboardFile().string())["panels"]) {
    for (const YAML::Node& target : panel["targets"]) {
      queries.push_back(target["expr"].as<std::string>());
    }
  }
  return queries;
}

// Metric names in PromQL: identifiers of the project's and the process_* families, the suffixes
// of a histogram's series taken off.
std::set<std::string> MetricNamesIn(const std::string& text) {
  std::set<std::string> names;
  const std::regex name(R"(\b(talos_reconciler_[a-z_]+|process_[a-z_]+)\b)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator();
       ++it) {
    std::string n = (*it)[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (n.ends_with(suffix) && n.find("_seconds") != std::string::npos) {
        n.resize(n.size() - std::string(suffix).size());
      }
    }
    names.insert(n);
  }
  return names;
}

// The names docs/metrics.md lists in its table (first column).
std::set<std::string> DocumentedMetrics() {
  std::set<std::string> names;
  std::istringstream lines(FileText(kSourceRoot / "docs/metrics.md"));
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("| `")) continue;
    const std::string first = line.substr(0, line.find(" |", 2));
    for (const std::string& n : MetricNamesIn(first)) names.insert(n);
  }
  return names;
}

TEST(AlertRulesTest, PassPromtoolCheckAndTheirUnitTests) {
  const ProcessResult check = RunCommand({"promtool", "check", "rules", RulesFile().string()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_THAT(check.out, ::testing::HasSubstr("SUCCESS: " + std::to_string(AlertNames().size()) +
                                              " rules found"));
  const ProcessResult test = RunCommand(
      {"promtool", "test", "rules", (kSourceRoot / "tests/chart/prometheus-rules-test.yaml").string()});
  EXPECT_EQ(test.exit_code, 0) << test.out << test.err;
}

TEST(AlertRulesTest, EveryAlertHasACaseThatFiresAndOneThatDoesNot) {
  std::map<std::string, int> fires;
  std::map<std::string, int> silent;
  const YAML::Node tests =
      YAML::LoadFile((kSourceRoot / "tests/chart/prometheus-rules-test.yaml").string());
  for (const YAML::Node& group : tests["tests"]) {
    for (const YAML::Node& c : group["alert_rule_test"]) {
      const std::string alert = c["alertname"].as<std::string>();
      ++(c["exp_alerts"].size() > 0 ? fires : silent)[alert];
    }
  }
  const std::vector<std::string> alerts = AlertNames();
  EXPECT_GE(alerts.size(), 10u);
  for (const std::string& alert : alerts) {
    EXPECT_GT(fires[alert], 0) << alert << " never fires in the unit tests";
    EXPECT_GT(silent[alert], 0) << alert << " is never shown silent in the unit tests";
  }
}

TEST(AlertRulesTest, ThePrometheusRuleCarriesTheFilesGroups) {
  HelmRunner helm;
  const Objects objects = helm.Template(
      "git: {repo: https://git.example.com/c.git}\n"
      "metrics: {prometheusRule: {enabled: true, labels: {release: kps}}}\n");
  ASSERT_TRUE(objects.contains("PrometheusRule/r-talos-reconciler"));
  const YAML::Node rule = objects.at("PrometheusRule/r-talos-reconciler");
  EXPECT_EQ(rule["metadata"]["labels"]["release"].as<std::string>(), "kps");
  EXPECT_EQ(YAML::Dump(rule["spec"]["groups"]),
            YAML::Dump(YAML::LoadFile(RulesFile().string())["groups"]));
  // Off by default, as are the dashboard and the PodMonitor.
  const Objects plain = helm.Template("git: {repo: https://git.example.com/c.git}\n");
  for (const char* absent : {"PrometheusRule/r-talos-reconciler", "PodMonitor/r-talos-reconciler",
                             "ConfigMap/r-talos-reconciler-dashboard"}) {
    EXPECT_FALSE(plain.contains(absent)) << absent;
  }
}

TEST(DashboardTest, IsAConfigMapForGrafanasSidecarAndItsQueriesParse) {
  HelmRunner helm;
  const Objects objects = helm.Template(
      "git: {repo: https://git.example.com/c.git}\n"
      "metrics: {dashboard: {enabled: true, namespace: monitoring}, podMonitor: {enabled: true}}\n");
  ASSERT_TRUE(objects.contains("ConfigMap/r-talos-reconciler-dashboard"));
  const YAML::Node map = objects.at("ConfigMap/r-talos-reconciler-dashboard");
  EXPECT_EQ(map["metadata"]["namespace"].as<std::string>(), "monitoring");
  EXPECT_EQ(map["metadata"]["labels"]["grafana_dashboard"].as<std::string>(), "1");
  EXPECT_EQ(map["data"]["talos-reconciler.json"].as<std::string>() + "\n",
            FileText(DashboardFile()));
  ASSERT_TRUE(objects.contains("PodMonitor/r-talos-reconciler"));

  // The queries as recording rules, Grafana's variables replaced: promtool parses each.
  const std::vector<std::string> queries = DashboardQueries();
  ASSERT_GE(queries.size(), 15u);
  YAML::Node rules;
  YAML::Node group;
  group["name"] = "dashboard";
  for (size_t i = 0; i < queries.size(); ++i) {
    std::string q = std::regex_replace(queries[i], std::regex(R"(\$__(rate_interval|range))"), "5m");
    q = std::regex_replace(q, std::regex(R"(\$namespace)"), ".*");
    YAML::Node rule;
    rule["record"] = "dashboard:query_" + std::to_string(i);
    rule["expr"] = q;
    group["rules"].push_back(rule);
  }
  rules["groups"].push_back(group);
  gitsource::testing::TempDir dir;
  gitsource::testing::WriteFile(dir / "dashboard-rules.yaml", YAML::Dump(rules));
  const ProcessResult check =
      RunCommand({"promtool", "check", "rules", (dir / "dashboard-rules.yaml").string()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

// The daemon's families are listed in docs/metrics.md (and MetricsTest / the end-to-end scrape
// check the daemon renders them); a rule or panel naming another would never see data.
TEST(MonitoringMetricsTest, EveryMetricNamedIsOneTheDaemonDocuments) {
  const std::set<std::string> documented = DocumentedMetrics();
  ASSERT_TRUE(documented.contains("talos_reconciler_cluster_phase"));
  ASSERT_TRUE(documented.contains("process_resident_memory_bytes"));
  std::set<std::string> named = MetricNamesIn(FileText(RulesFile()));
  for (const std::string& q : DashboardQueries()) named.merge(MetricNamesIn(q));
  EXPECT_GE(named.size(), 15u);
  for (const std::string& n : named) EXPECT_TRUE(documented.contains(n)) << n;
  // The extraction can fail: a made-up name is not documented.
  EXPECT_FALSE(documented.contains(*MetricNamesIn("rate(talos_reconciler_made_up_total[5m])").begin()));
}

}  // namespace
}  // namespace tr::chart
