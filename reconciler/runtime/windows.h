// Maintenance windows evaluated against the clock: is one open now, and when does the next
// open. Uses the system tz database (daylight-saving changes included) through the date
// library. Thread-safe.
#pragma once

#include <vector>

#include "core/profile.h"
#include "core/rollout.h"
#include "core/update_policy.h"

namespace tr::reconciler {

// No windows: always open. A window opens at `start` local time on each of its days and stays
// open for `duration` (possibly past midnight). A local start that does not exist (a
// spring-forward gap) opens at the first instant after the gap. An unknown time zone counts
// as closed, with no next opening: profiles are validated against the same database.
core::WindowState EvaluateWindows(const std::vector<core::MaintenanceWindow>& windows,
                                  core::TimePoint now);

// True when `schedule`'s cron expression names a minute, in its time zone, after `after` and
// at or before `until` (looked at over at most the last 8 days of that span). An unknown time
// zone never fires.
bool ScheduleFiresBetween(const core::UpdateSchedule& schedule, core::TimePoint after,
                          core::TimePoint until);

}  // namespace tr::reconciler
