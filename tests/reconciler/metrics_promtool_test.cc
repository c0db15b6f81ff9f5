// /metrics in the Prometheus text format: the families carry their values, and the text is checked
// by Prometheus's own linter (`promtool check metrics`, Debian package prometheus;
// scripts/bootstrap test installs it with its service off).
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reconciler/runtime/metrics.h"
#include "reconciler/runtime/process_metrics.h"
#include "reconciler/runtime/version.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Checked {
  int exit_code = -1;
  std::string output;
};

// Runs `promtool check metrics` on `text`; its exit code and what it printed.
Checked PromtoolCheck(const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("metrics-promtool-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::create_directories(dir);
  std::ofstream(dir / "metrics.txt") << text;
  const std::string command = "promtool check metrics < '" + (dir / "metrics.txt").string() +
                              "' > '" + (dir / "out.txt").string() + "' 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream out;
  out << std::ifstream(dir / "out.txt").rdbuf();
  fs::remove_all(dir);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out.str()};
}

// Every family with values in it, as a daemon that rolled out, failed a node, took webhooks
// and sent notifications exposes them.
void FillAsBusy(Metrics& metrics) {
  using namespace std::chrono_literals;
  metrics.reconciles.Inc("done", 12);
  metrics.reconciles.Inc("transient_error");
  metrics.node_upgrades_started.Inc({}, 5);
  metrics.node_upgrades.Inc("completed", 4);
  metrics.node_upgrades.Inc("failed");
  for (auto d : {90s, 200s, 200s, 700s}) metrics.node_upgrade_duration.Observe("completed", d);
  metrics.node_upgrade_duration.Observe("failed", 1800s);
  metrics.git_polls.Inc("ok", 30);
  metrics.git_polls.Inc("failed", 2);
  metrics.git_poll_duration.Observe("ok", 120ms);
  metrics.git_poll_duration.Observe("failed", 10s);
  metrics.status_commits.Inc({}, 9);
  metrics.webhook_requests.Inc("accepted", 3);
  metrics.webhook_requests.Inc("bad_signature");
  metrics.webhook_requests.Inc("peer_connections", 2);
  metrics.endpoint_refused.Inc("timeout");
  metrics.notifications.Inc("sent", 7);
  metrics.notifications.Inc("retried");
  metrics.cluster_phase.Set("prod-eu-1", "UpgradingTalos");
  metrics.cluster_phase.Set("staging", "Ready");
  metrics.ready = true;
}

TEST(MetricsPromtoolTest, EveryMetricPassesPromtool) {
  Metrics metrics;
  FillAsBusy(metrics);
  const std::string text = metrics.RenderPrometheus();
  ASSERT_THAT(text, HasSubstr("talos_reconciler_reconciles_total{outcome=\"done\"} 12\n"));
  const Checked checked = PromtoolCheck(text);
  EXPECT_EQ(checked.exit_code, 0) << checked.output << "\n" << text;
  EXPECT_EQ(checked.output, "") << text;
}

TEST(MetricsTest, CountersByLabelStartAtZeroForEveryKnownValue) {
  const std::string text = Metrics().RenderPrometheus();
  for (const char* line :
       {"# TYPE talos_reconciler_reconciles_total counter\n",
        "talos_reconciler_reconciles_total{outcome=\"stalled\"} 0\n",
        "talos_reconciler_node_upgrades_total{result=\"rolled_back\"} 0\n",
        "talos_reconciler_node_upgrades_started_total 0\n",
        "talos_reconciler_git_polls_total{result=\"failed\"} 0\n",
        "talos_reconciler_webhook_requests_total{outcome=\"queue_full\"} 0\n",
        "talos_reconciler_webhook_requests_total{outcome=\"headers_too_large\"} 0\n",
        "talos_reconciler_endpoint_refused_total{reason=\"connections\"} 0\n",
        "talos_reconciler_notifications_total{result=\"dropped\"} 0\n",
        "talos_reconciler_status_commits_total 0\n",
        "# TYPE talos_reconciler_node_upgrade_duration_seconds histogram\n",
        "# TYPE talos_reconciler_cluster_phase gauge\n", "talos_reconciler_ready 0\n"}) {
    EXPECT_THAT(text, HasSubstr(line));
  }
}

TEST(MetricsTest, FamiliesCarryTheirValues) {
  Metrics metrics;
  FillAsBusy(metrics);
  const std::string text = metrics.RenderPrometheus();
  for (
      const char* line :
      {"talos_reconciler_reconciles_total{outcome=\"transient_error\"} 1\n",
       "talos_reconciler_node_upgrades_started_total 5\n",
       "talos_reconciler_node_upgrades_total{result=\"completed\"} 4\n",
       "talos_reconciler_node_upgrades_total{result=\"failed\"} 1\n",
       // Buckets are cumulative: 90 s is under 120, 200 s twice under 300, 700 s under 900.
       "talos_reconciler_node_upgrade_duration_seconds_bucket{result=\"completed\",le=\"60\"} 0\n",
       "talos_reconciler_node_upgrade_duration_seconds_bucket{result=\"completed\",le=\"120\"} 1\n",
       "talos_reconciler_node_upgrade_duration_seconds_bucket{result=\"completed\",le=\"300\"} 3\n",
       "talos_reconciler_node_upgrade_duration_seconds_bucket{result=\"completed\",le=\"900\"} 4\n",
       "talos_reconciler_node_upgrade_duration_seconds_bucket{result=\"completed\",le=\"+Inf\"} "
       "4\n",
       "talos_reconciler_node_upgrade_duration_seconds_sum{result=\"completed\"} 1190\n",
       "talos_reconciler_node_upgrade_duration_seconds_count{result=\"completed\"} 4\n",
       "talos_reconciler_node_upgrade_duration_seconds_count{result=\"failed\"} 1\n",
       "talos_reconciler_git_polls_total{result=\"ok\"} 30\n",
       "talos_reconciler_git_poll_duration_seconds_bucket{result=\"ok\",le=\"0.25\"} 1\n",
       "talos_reconciler_git_poll_duration_seconds_bucket{result=\"failed\",le=\"5\"} 0\n",
       "talos_reconciler_git_poll_duration_seconds_bucket{result=\"failed\",le=\"10\"} 1\n",
       "talos_reconciler_status_commits_total 9\n",
       "talos_reconciler_webhook_requests_total{outcome=\"accepted\"} 3\n",
       "talos_reconciler_webhook_requests_total{outcome=\"bad_signature\"} 1\n",
       "talos_reconciler_webhook_requests_total{outcome=\"peer_connections\"} 2\n",
       "talos_reconciler_endpoint_refused_total{reason=\"timeout\"} 1\n",
       "talos_reconciler_notifications_total{result=\"sent\"} 7\n",
       "talos_reconciler_notifications_total{result=\"retried\"} 1\n",
       "talos_reconciler_ready 1\n"}) {
    EXPECT_THAT(text, HasSubstr(line));
  }
}

// One series per phase for each cluster, 1 for its phase only; a forgotten cluster goes.
TEST(MetricsTest, ClusterPhaseIsOneForTheCurrentPhaseOnly) {
  Metrics metrics;
  FillAsBusy(metrics);
  std::string text = metrics.RenderPrometheus();
  EXPECT_THAT(
      text,
      HasSubstr(
          "talos_reconciler_cluster_phase{cluster=\"prod-eu-1\",phase=\"UpgradingTalos\"} 1\n"));
  EXPECT_THAT(
      text, HasSubstr("talos_reconciler_cluster_phase{cluster=\"prod-eu-1\",phase=\"Ready\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("talos_reconciler_cluster_phase{cluster=\"staging\",phase=\"Ready\"} 1\n"));
  size_t series = 0, ones = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("talos_reconciler_cluster_phase{")) continue;
    ++series;
    ones += line.ends_with(" 1");
  }
  EXPECT_EQ(series, 2u * 9u);  // nine phases
  EXPECT_EQ(ones, 2u);
  metrics.cluster_phase.Set("prod-eu-1", "UpgradeFailed");
  metrics.cluster_phase.Forget("staging");
  text = metrics.RenderPrometheus();
  EXPECT_THAT(
      text,
      HasSubstr(
          "talos_reconciler_cluster_phase{cluster=\"prod-eu-1\",phase=\"UpgradeFailed\"} 1\n"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "talos_reconciler_cluster_phase{cluster=\"prod-eu-1\",phase=\"UpgradingTalos\"} 0\n"));
  EXPECT_THAT(text, Not(HasSubstr("cluster=\"staging\"")));
}

// Label values are escaped as the text format requires; promtool parses the result.
TEST(MetricsTest, LabelValuesAreEscaped) {
  GaugeFamily gauge("test_items", "Items.", "name");
  gauge.Set("a\"b\\c\nd", 2);
  std::string text;
  gauge.Render(text);
  EXPECT_THAT(text, HasSubstr("talos_reconciler_test_items{name=\"a\\\"b\\\\c\\nd\"} 2\n"));
  const Checked checked = PromtoolCheck(text);
  EXPECT_EQ(checked.exit_code, 0) << checked.output << text;
  gauge.Erase("a\"b\\c\nd");
  EXPECT_FALSE(gauge.Has("a\"b\\c\nd"));
}

// What dashboards and alerts look for beside the reconciler's own families: the build, and the
// process_* families every Prometheus client exports, read from /proc at each scrape.
TEST(MetricsPromtoolTest, BuildInfoAndProcessFamiliesPassPromtool) {
  Metrics metrics;
  metrics.status_record_failures.Inc();
  const std::string text = metrics.RenderPrometheus() + RenderProcessMetrics();
  EXPECT_THAT(text, HasSubstr("talos_reconciler_status_record_failures_total 1\n"));
  EXPECT_THAT(text, HasSubstr("talos_reconciler_build_info{version=\"" +
                              std::string(ReconcilerVersion()) + "\",commit=\""));
  std::map<std::string, double> process;
  std::istringstream lines(RenderProcessMetrics());
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    process[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  EXPECT_GT(process["process_resident_memory_bytes"], 1 << 20);
  EXPECT_GE(process["process_virtual_memory_bytes"], process["process_resident_memory_bytes"]);
  EXPECT_GE(process["process_open_fds"], 3);  // stdin, stdout, stderr at least
  EXPECT_GE(process["process_max_fds"], process["process_open_fds"]);
  EXPECT_GT(process["process_cpu_seconds_total"], 0);
  // Seconds since the epoch, between the machine's boot (/proc/stat's btime) and now (boot plus
  // /proc/uptime), read here without a clock of this process.
  double boot = 0;
  std::ifstream stat("/proc/stat");
  for (std::string line; std::getline(stat, line);) {
    if (line.rfind("btime ", 0) == 0) boot = std::stod(line.substr(6));
  }
  double uptime = 0;
  std::ifstream("/proc/uptime") >> uptime;
  ASSERT_GT(boot, 1.5e9);
  EXPECT_GE(process["process_start_time_seconds"], boot);
  EXPECT_LE(process["process_start_time_seconds"], boot + uptime + 1);
  const Checked checked = PromtoolCheck(text);
  EXPECT_EQ(checked.exit_code, 0) << checked.output << "\n" << text;
  EXPECT_EQ(checked.output, "") << text;
}

// The check can fail: a counter without the _total suffix is what promtool reports.
TEST(MetricsPromtoolTest, PromtoolReportsAProblem) {
  const Checked checked = PromtoolCheck(
      "# HELP talos_reconciler_polls Polls.\n# TYPE talos_reconciler_polls counter\n"
      "talos_reconciler_polls 3\n");
  EXPECT_NE(checked.exit_code, 0);
  EXPECT_THAT(checked.output, HasSubstr("counter metrics should have \"_total\" suffix"));
}

}  // namespace
}  // namespace tr::reconciler
