// Time-zone lookups against the system tz database (Debian's tzdata), through the date
// library, since GCC 12's <chrono> has none. Thread-safe after the first call.
#pragma once

#include <string_view>

namespace tr::reconciler {

// True when `name` is an IANA time zone known to the system database ("Europe/Oslo", "UTC").
bool IsKnownTimezone(std::string_view name);

}  // namespace tr::reconciler
