#include "reconciler/runtime/timezones.h"

#include <stdexcept>
#include <string>

#include "date/tz.h"

namespace tr::reconciler {

bool IsKnownTimezone(std::string_view name) {
  try {
    return date::locate_zone(std::string(name)) != nullptr;
  } catch (const std::runtime_error&) {
    return false;
  }
}

}  // namespace tr::reconciler
