// docs/metrics.md lists, for every family whose label values are known in advance, exactly the
// values /metrics exposes (at 0 from the start): a value added in the code and not to the page,
// or one the page keeps after the code dropped it, fails here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "reconciler/runtime/metrics.h"
#include "tests/support/manual_pages.h"

namespace tr::reconciler {
namespace {

using LabelValues = std::map<std::string, std::set<std::string>>;  // metric -> label values

// `talos_reconciler_x{label="value"} 0` lines of the exposition, by metric (histogram series,
// which carry `le`, and unlabelled ones are left out).
LabelValues ExposedValues(const std::string& exposition) {
  static const std::regex kSeries(R"re(^(talos_reconciler_[a-z_]+)\{[a-z_]+="([^"]*)"\} )re");
  LabelValues values;
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kSeries)) values[m[1]].insert(m[2]);
  }
  return values;
}

// The metrics table's rows whose labels cell reads "`label`: `v1`, `v2`, ...", by metric.
LabelValues DocumentedValues(const std::string& page) {
  static const std::regex kRow(
      R"re(^\| `(talos_reconciler_[a-z_]+)` \| [a-z]+ \| `[a-z_]+`: ([^|]*)\|)re");
  static const std::regex kValue("`([a-z_]+)`");
  LabelValues values;
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    std::smatch row;
    if (!std::regex_search(line, row, kRow)) continue;
    const std::string cell = row[2];
    std::set<std::string>& listed = values[row[1]];
    for (std::sregex_iterator it(cell.begin(), cell.end(), kValue), end; it != end; ++it) {
      listed.insert((*it)[1]);
    }
  }
  return values;
}

TEST(MetricsDocTest, TheTableListsEveryLabelValueTheCodeExposes) {
  const LabelValues exposed = ExposedValues(Metrics().RenderPrometheus());
  const LabelValues documented =
      DocumentedValues(test_support::ReadPage(TR_SOURCE_DIR, "docs/metrics.md"));
  // Families without known values (cluster_phase's series come with clusters) are not exposed
  // yet; every one that is must be on the page with the same values.
  ASSERT_TRUE(exposed.contains("talos_reconciler_notifications_total"));
  for (const auto& [metric, values] : exposed) {
    ASSERT_TRUE(documented.contains(metric)) << metric << " has no row listing its label values";
    EXPECT_EQ(documented.at(metric), values) << metric << " in docs/metrics.md";
  }
  for (const auto& [metric, values] : documented) {
    EXPECT_TRUE(exposed.contains(metric)) << metric << " lists values /metrics does not expose";
  }
}

}  // namespace
}  // namespace tr::reconciler
