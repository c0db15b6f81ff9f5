// Small text helpers shared by core's parsers. (Debian's abseil is built with its own
// string_view type, so absl's string utilities do not take std::string_view.)
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tr::core {

// Splits on every `separator`; "a..b" gives {"a", "", "b"}, "" gives {""}.
std::vector<std::string_view> Split(std::string_view text, char separator);

// True when `text` is non-empty and only ASCII digits.
bool IsDigits(std::string_view text);

}  // namespace tr::core
