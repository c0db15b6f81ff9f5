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

// The candidate `word` was most likely meant to be, for "did you mean": within two edits
// (Levenshtein), or a candidate that `word` starts or that starts `word` (at least four
// characters). Empty when none is close.
std::string ClosestSpelling(std::string_view word, const std::vector<std::string_view>& candidates);

}  // namespace tr::core
