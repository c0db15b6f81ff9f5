#include "core/duration.h"

#include <gtest/gtest.h>

namespace tr::core {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

struct DurationCase {
  std::string text;
  int64_t seconds;  // -1: invalid
  std::string message;
};

class ParseDurationTest : public testing::TestWithParam<DurationCase> {};

TEST_P(ParseDurationTest, ParsesOrSaysWhy) {
  const DurationCase& c = GetParam();
  absl::StatusOr<seconds> d = ParseDuration(c.text);
  if (c.seconds >= 0) {
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->count(), c.seconds);
    return;
  }
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.status().message(), c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseDurationTest,
    testing::Values(
        DurationCase{"30s", 30, ""}, DurationCase{"30m", 1800, ""}, DurationCase{"4h", 14400, ""},
        DurationCase{"1h30m", 5400, ""}, DurationCase{"90s", 90, ""},
        DurationCase{"1h0m30s", 3630, ""}, DurationCase{"0s", 0, ""},
        DurationCase{"168h", 604800, ""}, DurationCase{"90m", 5400, ""},
        DurationCase{"", -1, "invalid duration \"\": empty; write e.g. 30s, 10m or 1h30m"},
        DurationCase{"30", -1,
                     "invalid duration \"30\": missing unit: write s, m or h after the number, "
                     "e.g. 30s"},
        DurationCase{"1h30", -1,
                     "invalid duration \"1h30\": missing unit: write s, m or h after the number, "
                     "e.g. 30s"},
        DurationCase{"-5m", -1, "invalid duration \"-5m\": must not be negative"},
        DurationCase{"+5m", -1,
                     "invalid duration \"+5m\": want <number><unit> parts such as 30s, 10m, "
                     "1h30m"},
        DurationCase{"h", -1,
                     "invalid duration \"h\": want <number><unit> parts such as 30s, 10m, 1h30m"},
        DurationCase{" 5m", -1,
                     "invalid duration \" 5m\": want <number><unit> parts such as 30s, 10m, "
                     "1h30m"},
        DurationCase{"5m ", -1,
                     "invalid duration \"5m \": want <number><unit> parts such as 30s, 10m, "
                     "1h30m"},
        DurationCase{"1.5h", -1,
                     "invalid duration \"1.5h\": fractions are not allowed; write 1h30m rather "
                     "than 1.5h"},
        DurationCase{"1d", -1, "invalid duration \"1d\": unknown unit; use h, m or s (e.g. 1h30m)"},
        DurationCase{"500ms", -1,
                     "invalid duration \"500ms\": want <number><unit> parts such as 30s, 10m, "
                     "1h30m"},
        DurationCase{"30m1h", -1,
                     "invalid duration \"30m1h\": units must go largest first (h, m, s), each "
                     "once"},
        DurationCase{"1m1m", -1,
                     "invalid duration \"1m1m\": units must go largest first (h, m, s), each "
                     "once"},
        DurationCase{"1234567890s", -1,
                     "invalid duration \"1234567890s\": overflow: number too large"},
        DurationCase{"999999999h", -1,
                     "invalid duration \"999999999h\": overflow: longer than 100 years"},
        DurationCase{"99999999999999999999999s", -1,
                     "invalid duration \"99999999999999999999999s\": overflow: number too large"}));

TEST(FormatDurationTest, IsTheShortestFormThatParsesBack) {
  EXPECT_EQ(FormatDuration(seconds(0)), "0s");
  EXPECT_EQ(FormatDuration(seconds(30)), "30s");
  EXPECT_EQ(FormatDuration(seconds(5400)), "1h30m");
  EXPECT_EQ(FormatDuration(seconds(3630)), "1h30s");
  EXPECT_EQ(FormatDuration(seconds(-90)), "-1m30s");
  for (int64_t s : {1, 59, 60, 61, 3599, 3600, 86400, 604800, 1234567}) {
    EXPECT_EQ(ParseDuration(FormatDuration(seconds(s)))->count(), s) << s;
  }
}

TEST(WeekdayTest, AcceptsShortAndFullNamesInAnyCase) {
  EXPECT_EQ(*ParseWeekday("Sun"), 0);
  EXPECT_EQ(*ParseWeekday("mon"), 1);
  EXPECT_EQ(*ParseWeekday("TUE"), 2);
  EXPECT_EQ(*ParseWeekday("Wednesday"), 3);
  EXPECT_EQ(*ParseWeekday("thursday"), 4);
  EXPECT_EQ(*ParseWeekday("Fri"), 5);
  EXPECT_EQ(*ParseWeekday("Saturday"), 6);
  for (std::string_view bad : {"", "Sa", "Satur", "Sonntag", "7", "Sat "}) {
    absl::StatusOr<int> day = ParseWeekday(bad);
    ASSERT_FALSE(day.ok()) << bad;
    EXPECT_EQ(day.status().message(),
              "invalid day \"" + std::string(bad) + "\": want Mon, Tue, Wed, Thu, Fri, Sat or Sun");
  }
  EXPECT_EQ(WeekdayName(0), "Sun");
  EXPECT_EQ(WeekdayName(6), "Sat");
  EXPECT_EQ(WeekdayName(7), "?");
}

TEST(TimeOfDayTest, IsTwentyFourHourHHMM) {
  EXPECT_EQ(*ParseTimeOfDay("00:00"), minutes(0));
  EXPECT_EQ(*ParseTimeOfDay("02:00"), minutes(120));
  EXPECT_EQ(*ParseTimeOfDay("23:59"), minutes(23 * 60 + 59));
  for (std::string_view bad : {"24:00", "2:00", "02:60", "0200", "02:0", "02-00", "ab:cd", "",
                               "02:00 ", "+2:00", "02:00pm"}) {
    absl::StatusOr<minutes> t = ParseTimeOfDay(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(t.status().message(), "invalid time \"" + std::string(bad) +
                                        "\": want HH:MM on a 24-hour clock, e.g. \"02:00\"");
  }
}

}  // namespace
}  // namespace tr::core
