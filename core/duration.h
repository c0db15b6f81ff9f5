// Durations, weekdays and times of day as people write them in profiles.
//
// Durations are one or more <digits><unit> parts with units h, m and s, largest first, each
// unit at most once: "30s", "30m", "4h", "1h30m", "90s", "1h0m30s". Refused: a missing unit
// ("30"), signs ("-5m", "+5m"), fractions ("1.5h"), spaces, other units ("1d", "500ms"), a part
// over 9 digits or a total over 100 years ("overflow"). Zero ("0s") parses; callers decide
// whether zero means anything.
//
// Weekdays are English names, short or full, any letter case: "Sat", "sat", "Saturday".
// Times of day are 24-hour "HH:MM" with two-digit hours and minutes ("02:00", "23:59").
//
// Pure; thread-compatible.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tr::core {

// InvalidArgument with a reason a person can act on ("missing unit: write 30s, 30m or 30h").
absl::StatusOr<std::chrono::seconds> ParseDuration(std::string_view text);

// The shortest form ParseDuration reads back: 5400s -> "1h30m", 0s -> "0s".
// Negative durations format with a leading "-".
std::string FormatDuration(std::chrono::seconds duration);

// 0 = Sunday ... 6 = Saturday, as in MaintenanceWindow::days. InvalidArgument otherwise.
absl::StatusOr<int> ParseWeekday(std::string_view text);

// "Sun" .. "Sat" for 0..6; "?" for anything else.
std::string_view WeekdayName(int day);

// Minutes since midnight for "HH:MM"; InvalidArgument otherwise.
absl::StatusOr<std::chrono::minutes> ParseTimeOfDay(std::string_view text);

}  // namespace tr::core
