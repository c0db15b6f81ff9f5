#include "core/timestamp.h"

#include <charconv>

#include "fmt/compile.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

bool ReadInt(std::string_view text, size_t pos, size_t len, int& out) {
  if (pos + len > text.size()) return false;
  for (size_t i = pos; i < pos + len; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  std::from_chars(text.data() + pos, text.data() + pos + len, out);
  return true;
}

absl::Status Bad(std::string_view text) {
  return absl::InvalidArgumentError(
      fmt::format("invalid timestamp \"{}\": want YYYY-MM-DDTHH:MM:SSZ", text));
}

}  // namespace

std::string FormatTimestamp(TimePoint t) {
  using namespace std::chrono;
  const auto secs = floor<seconds>(t);
  const auto day = floor<days>(secs);
  const year_month_day ymd{day};
  const hh_mm_ss hms{secs - day};
  // Compiled: statuses and their records format many of these, and a format string parsed at
  // every call was most of the cost.
  return fmt::format(FMT_COMPILE("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z"),
                     static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()), hms.hours().count(), hms.minutes().count(),
                     hms.seconds().count());
}

absl::StatusOr<TimePoint> ParseTimestamp(std::string_view text) {
  using namespace std::chrono;
  int y, mo, d, h, mi, s;
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' || text[16] != ':' ||
      !ReadInt(text, 0, 4, y) || !ReadInt(text, 5, 2, mo) || !ReadInt(text, 8, 2, d) ||
      !ReadInt(text, 11, 2, h) || !ReadInt(text, 14, 2, mi) || !ReadInt(text, 17, 2, s)) {
    return Bad(text);
  }
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)},
                           day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) return Bad(text);
  // A system_clock time point counts nanoseconds in 64 bits: years past 2262 (or before 1677)
  // would overflow it. Nothing this reconciler records lies outside 1970-2200.
  if (y < 1970 || y > 2200) {
    return absl::InvalidArgumentError(
        fmt::format("invalid timestamp \"{}\": the year must be within 1970-2200", text));
  }
  size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
  }
  std::string_view zone = text.substr(pos);
  int offset_minutes = 0;
  if (zone == "Z" || zone == "z") {
    offset_minutes = 0;
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    int oh, om;
    if (!ReadInt(zone, 1, 2, oh) || !ReadInt(zone, 4, 2, om)) return Bad(text);
    offset_minutes = (zone[0] == '-' ? -1 : 1) * (oh * 60 + om);
  } else {
    return Bad(text);
  }
  return sys_days{ymd} + hours{h} + minutes{mi} + seconds{s} - minutes{offset_minutes};
}

}  // namespace tr::core
