// RFC 3339 timestamps in UTC ("2026-11-22T02:56:00Z"), as status files store them.
//
// Pure; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tr::core {

using TimePoint = std::chrono::system_clock::time_point;

// Whole seconds, UTC, with a trailing Z.
std::string FormatTimestamp(TimePoint t);

// Reads what FormatTimestamp writes (also with fractional seconds or a +HH:MM offset), for a
// year within 1970-2200. InvalidArgument otherwise.
absl::StatusOr<TimePoint> ParseTimestamp(std::string_view text);

}  // namespace tr::core
