#include "reconciler/windows.h"

#include <algorithm>
#include <stdexcept>

#include "date/tz.h"

namespace tr::reconciler {
namespace {

using std::chrono::days;

// Start instants of `window` on the local days from one week before `now` to one after.
std::vector<core::TimePoint> Openings(const core::MaintenanceWindow& window,
                                      const date::time_zone& zone, core::TimePoint now) {
  std::vector<core::TimePoint> openings;
  const auto local_now = zone.to_local(std::chrono::floor<std::chrono::seconds>(now));
  const auto today = date::floor<date::days>(local_now);
  for (int offset = -8; offset <= 8; ++offset) {
    const date::local_days day = today + date::days(offset);
    const int weekday = static_cast<int>(date::weekday(day).c_encoding());
    if (std::find(window.days.begin(), window.days.end(), weekday) == window.days.end()) continue;
    const auto local_start = day + window.start;
    const date::local_info info = zone.get_info(local_start);
    core::TimePoint start;
    if (info.result == date::local_info::nonexistent) {
      start = info.second.begin;  // the first instant after the gap
    } else {
      start = zone.to_sys(local_start, date::choose::earliest);
    }
    openings.push_back(start);
  }
  return openings;
}

}  // namespace

core::WindowState EvaluateWindows(const std::vector<core::MaintenanceWindow>& windows,
                                  core::TimePoint now) {
  if (windows.empty()) return {true, std::nullopt};
  core::WindowState state{false, std::nullopt};
  for (const core::MaintenanceWindow& window : windows) {
    const date::time_zone* zone = nullptr;
    try {
      zone = date::locate_zone(window.timezone);
    } catch (const std::runtime_error&) {
      continue;
    }
    for (core::TimePoint start : Openings(window, *zone, now)) {
      if (start <= now && now < start + window.duration) state.open = true;
      if (start > now && (!state.next_open || start < *state.next_open)) state.next_open = start;
    }
  }
  return state;
}

}  // namespace tr::reconciler
