// The rollout reports' property (report_property.h) on fixed seeds: the same sequences in
// every run, in both passes of scripts/test. report_property_bench runs it on random seeds.
#include "tests/forge/report_property.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tr::reconciler::pull_requests::report_property {
namespace {

using ::testing::IsEmpty;

TEST(ReportPropertyTest, EveryReportSaysWhatHappenedToItsChangeAndNeverGoesBack) {
  int merges = 0, restarts = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const PropertyResult result = RunReportProperty({.seed = seed, .steps = 30});
    EXPECT_THAT(result.violations, IsEmpty());
    merges += result.merges;
    restarts += result.restarts;
  }
  // The sequences exercise what the property is about.
  EXPECT_GE(merges, 30);
  EXPECT_GE(restarts, 6);
}

}  // namespace
}  // namespace tr::reconciler::pull_requests::report_property
