// /metrics in the Prometheus text format, checked by Prometheus's own linter (`promtool check
// metrics`, Debian package prometheus; scripts/bootstrap test installs it with its service off).
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reconciler/metrics.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;

struct Checked {
  int exit_code = -1;
  std::string output;
};

// Runs `promtool check metrics` on `text`; its exit code and what it printed.
Checked PromtoolCheck(const std::string& text) {
  const fs::path dir = fs::temp_directory_path() /
                       ("metrics-promtool-" + std::to_string(::getpid()) + "-" +
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

TEST(MetricsPromtoolTest, EveryMetricPassesPromtool) {
  Metrics metrics;
  metrics.reconciles = 12;
  metrics.reconcile_errors = 1;
  metrics.polls = 30;
  metrics.poll_errors = 2;
  metrics.node_upgrades_started = 5;
  metrics.node_upgrades_completed = 4;
  metrics.node_upgrades_failed = 1;
  metrics.status_commits = 9;
  metrics.ready = true;
  const std::string text = metrics.RenderPrometheus();
  ASSERT_THAT(text, ::testing::HasSubstr("talos_reconciler_reconciles_total 12\n"));
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
  EXPECT_THAT(checked.output, ::testing::HasSubstr("counter metrics should have \"_total\" suffix"));
}

}  // namespace
}  // namespace tr::reconciler
