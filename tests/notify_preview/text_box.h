// Drawing with text characters, for the previews: a box around lines, wrapped at a width
// counted in characters (UTF-8 code points), not bytes.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tr::notify_preview {

inline constexpr size_t kBoxWidth = 60;  // characters inside a box

// How many characters `text` shows (its UTF-8 code points).
size_t DisplayWidth(std::string_view text);
// `text` cut into lines of at most `width` characters, at spaces where there are any.
std::vector<std::string> Wrap(std::string_view text, size_t width);
// `text` followed by spaces up to `width` characters.
std::string PadRight(std::string_view text, size_t width);
// `top`, then `edged`, each line wrapped to fit, inside a box drawn with ┌─┐│└┘; a line "---"
// is a rule across the box. `edge` starts every line of `edged` (a colour bar, say "┃ ").
std::string Boxed(const std::vector<std::string>& top, const std::vector<std::string>& edged = {},
                  std::string_view edge = "");
// `rows` of label and value, the values aligned in one column after the longest label.
std::vector<std::string> Table(const std::vector<std::pair<std::string, std::string>>& rows);

}  // namespace tr::notify_preview
