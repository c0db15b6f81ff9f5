#include "core/duration.h"

#include <array>
#include <cstdint>

#include "core/text.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

constexpr int64_t kMaxDurationSeconds = int64_t{100} * 366 * 24 * 3600;

struct Unit {
  char symbol;
  int64_t seconds;
};
constexpr std::array<Unit, 3> kUnits = {{{'h', 3600}, {'m', 60}, {'s', 1}}};

constexpr std::array<std::string_view, 7> kShortDays = {"sun", "mon", "tue", "wed",
                                                        "thu", "fri", "sat"};
constexpr std::array<std::string_view, 7> kLongDays = {"sunday",   "monday", "tuesday", "wednesday",
                                                       "thursday", "friday", "saturday"};
constexpr std::array<std::string_view, 7> kDayNames = {"Sun", "Mon", "Tue", "Wed",
                                                       "Thu", "Fri", "Sat"};

absl::Status BadDuration(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("invalid duration \"{}\": {}", text, why));
}

std::string Lowercase(std::string_view text) {
  std::string s(text);
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

}  // namespace

absl::StatusOr<std::chrono::seconds> ParseDuration(std::string_view text) {
  if (text.empty()) return BadDuration(text, "empty; write e.g. 30s, 10m or 1h30m");
  if (text.front() == '-') return BadDuration(text, "must not be negative");
  int64_t total = 0;
  size_t next_unit = 0;  // units must come largest first, each once
  size_t i = 0;
  while (i < text.size()) {
    size_t digits_end = i;
    while (digits_end < text.size() && text[digits_end] >= '0' && text[digits_end] <= '9') {
      ++digits_end;
    }
    const std::string_view digits = text.substr(i, digits_end - i);
    if (!IsDigits(digits)) {
      return BadDuration(text, "want <number><unit> parts such as 30s, 10m, 1h30m");
    }
    if (digits.size() > 9) return BadDuration(text, "overflow: number too large");
    if (digits_end == text.size()) {
      return BadDuration(text, "missing unit: write s, m or h after the number, e.g. 30s");
    }
    const char symbol = text[digits_end];
    if (symbol == '.' || symbol == ',') {
      return BadDuration(text, "fractions are not allowed; write 1h30m rather than 1.5h");
    }
    size_t u = next_unit;
    while (u < kUnits.size() && kUnits[u].symbol != symbol) ++u;
    if (u == kUnits.size()) {
      const bool known = symbol == 'h' || symbol == 'm' || symbol == 's';
      return BadDuration(text, known ? "units must go largest first (h, m, s), each once"
                                     : "unknown unit; use h, m or s (e.g. 1h30m)");
    }
    int64_t value = 0;
    for (char c : digits) value = value * 10 + (c - '0');
    total += value * kUnits[u].seconds;
    if (total > kMaxDurationSeconds) return BadDuration(text, "overflow: longer than 100 years");
    next_unit = u + 1;
    i = digits_end + 1;
  }
  return std::chrono::seconds(total);
}

std::string FormatDuration(std::chrono::seconds duration) {
  int64_t s = duration.count();
  if (s == 0) return "0s";
  std::string out = s < 0 ? "-" : "";
  uint64_t rest = s < 0 ? 0 - static_cast<uint64_t>(s) : static_cast<uint64_t>(s);
  for (const Unit& unit : kUnits) {
    const uint64_t n = rest / static_cast<uint64_t>(unit.seconds);
    rest %= static_cast<uint64_t>(unit.seconds);
    if (n > 0) out += fmt::format("{}{}", n, unit.symbol);
  }
  return out;
}

absl::StatusOr<int> ParseWeekday(std::string_view text) {
  const std::string lower = Lowercase(text);
  for (int day = 0; day < 7; ++day) {
    if (lower == kShortDays[static_cast<size_t>(day)] ||
        lower == kLongDays[static_cast<size_t>(day)]) {
      return day;
    }
  }
  return absl::InvalidArgumentError(
      fmt::format("invalid day \"{}\": want Mon, Tue, Wed, Thu, Fri, Sat or Sun", text));
}

std::string_view WeekdayName(int day) {
  if (day < 0 || day > 6) return "?";
  return kDayNames[static_cast<size_t>(day)];
}

absl::StatusOr<std::chrono::minutes> ParseTimeOfDay(std::string_view text) {
  const auto bad = [text] {
    return absl::InvalidArgumentError(
        fmt::format("invalid time \"{}\": want HH:MM on a 24-hour clock, e.g. \"02:00\"", text));
  };
  if (text.size() != 5 || text[2] != ':') return bad();
  const std::string_view hh = text.substr(0, 2);
  const std::string_view mm = text.substr(3, 2);
  if (!IsDigits(hh) || !IsDigits(mm)) return bad();
  const int hours = (hh[0] - '0') * 10 + (hh[1] - '0');
  const int minutes = (mm[0] - '0') * 10 + (mm[1] - '0');
  if (hours > 23 || minutes > 59) return bad();
  return std::chrono::minutes(hours * 60 + minutes);
}

}  // namespace tr::core
