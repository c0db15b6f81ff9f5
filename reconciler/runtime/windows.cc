#include "reconciler/runtime/windows.h"

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

bool ScheduleFiresBetween(const core::UpdateSchedule& schedule, core::TimePoint after,
                          core::TimePoint until) {
  const date::time_zone* zone = nullptr;
  try {
    zone = date::locate_zone(schedule.timezone);
  } catch (const std::runtime_error&) {
    return false;
  }
  using std::chrono::minutes;
  const core::TimePoint earliest = until - days(8);
  auto minute = std::chrono::floor<minutes>(std::max(after, earliest)) + minutes(1);
  for (; minute <= until; minute += minutes(1)) {
    const auto local = zone->to_local(minute);
    const date::local_days day = date::floor<date::days>(local);
    const date::year_month_day ymd(day);
    const auto time = date::make_time(local - day);
    const core::LocalMinute at{
        .minute = static_cast<int>(time.minutes().count()),
        .hour = static_cast<int>(time.hours().count()),
        .day_of_month = static_cast<int>(static_cast<unsigned>(ymd.day())),
        .month = static_cast<int>(static_cast<unsigned>(ymd.month())),
        .weekday = static_cast<int>(date::weekday(day).c_encoding())};
    if (schedule.cron.Matches(at)) return true;
  }
  return false;
}

}  // namespace tr::reconciler
