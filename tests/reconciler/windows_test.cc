#include "reconciler/runtime/windows.h"

#include <gtest/gtest.h>

#include "core/timestamp.h"

namespace tr::reconciler {
namespace {

core::TimePoint At(const char* text) { return *core::ParseTimestamp(text); }

core::MaintenanceWindow Window(std::vector<int> days, int hour, int minute,
                               std::chrono::minutes duration, std::string zone) {
  return {std::move(days), std::chrono::hours(hour) + std::chrono::minutes(minute), duration,
          std::move(zone)};
}

struct WindowCase {
  const char* name;
  core::MaintenanceWindow window;
  const char* now;
  bool open;
  const char* next_open;  // "" for none
};

class WindowsTest : public testing::TestWithParam<WindowCase> {};

TEST_P(WindowsTest, OpenAndNext) {
  const WindowCase& c = GetParam();
  core::WindowState s = EvaluateWindows({c.window}, At(c.now));
  EXPECT_EQ(s.open, c.open);
  if (std::string(c.next_open).empty()) {
    EXPECT_FALSE(s.next_open.has_value());
  } else {
    ASSERT_TRUE(s.next_open.has_value());
    EXPECT_EQ(core::FormatTimestamp(*s.next_open), c.next_open);
  }
}

const auto k4h = std::chrono::hours(4);

INSTANTIATE_TEST_SUITE_P(
    Cases, WindowsTest,
    testing::Values(
        // 2026-11-21 is a Saturday; Oslo is UTC+1 in November.
        WindowCase{"InsideOsloWeekend", Window({0, 6}, 2, 0, k4h, "Europe/Oslo"),
                   "2026-11-21T02:30:00Z", true, "2026-11-22T01:00:00Z"},
        WindowCase{"BeforeOpening", Window({0, 6}, 2, 0, k4h, "Europe/Oslo"),
                   "2026-11-20T12:00:00Z", false, "2026-11-21T01:00:00Z"},
        WindowCase{"JustClosed", Window({0, 6}, 2, 0, k4h, "Europe/Oslo"), "2026-11-22T05:00:00Z",
                   false, "2026-11-28T01:00:00Z"},
        // In July Oslo is UTC+2.
        WindowCase{"SummerTime", Window({6}, 2, 0, k4h, "Europe/Oslo"), "2026-07-17T12:00:00Z",
                   false, "2026-07-18T00:00:00Z"},
        // Crossing midnight: Friday 22:00 for 4h is still open at Saturday 01:00.
        WindowCase{"PastMidnight", Window({5}, 22, 0, k4h, "UTC"), "2026-11-21T01:00:00Z", true,
                   "2026-11-27T22:00:00Z"},
        // 2026-03-29 02:30 does not exist in Oslo (clocks jump 02:00 -> 03:00).
        WindowCase{"SpringGap", Window({0}, 2, 30, std::chrono::hours(1), "Europe/Oslo"),
                   "2026-03-28T12:00:00Z", false, "2026-03-29T01:00:00Z"},
        WindowCase{"UnknownZoneIsClosed", Window({0, 1, 2, 3, 4, 5, 6}, 0, 0, k4h, "Mars/Base"),
                   "2026-11-21T02:30:00Z", false, ""}),
    [](const auto& row) { return std::string(row.param.name); });

TEST(WindowsTest, NoWindowsMeansAlwaysOpen) {
  core::WindowState s = EvaluateWindows({}, At("2026-11-21T02:30:00Z"));
  EXPECT_TRUE(s.open);
}

TEST(WindowsTest, AnyOfSeveralWindows) {
  core::WindowState s = EvaluateWindows(
      {Window({1}, 9, 0, k4h, "UTC"), Window({6}, 0, 0, k4h, "UTC")}, At("2026-11-21T02:00:00Z"));
  EXPECT_TRUE(s.open);
  EXPECT_EQ(core::FormatTimestamp(*s.next_open), "2026-11-23T09:00:00Z");
}

}  // namespace
}  // namespace tr::reconciler
