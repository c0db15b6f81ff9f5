#include "tests/notify_preview/text_box.h"

#include <algorithm>

namespace tr::notify_preview {
namespace {

std::string Repeat(std::string_view piece, size_t times) {
  std::string out;
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

// The byte offset of character `n` of `text` (text.size() past its end).
size_t ByteOffset(std::string_view text, size_t n) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars++ == n) return i;
  }
  return text.size();
}

// `text` split at its '\n's ("a\nb" gives {"a", "b"}, "a" gives {"a"}).
std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  for (size_t newline; (newline = text.find('\n')) != std::string_view::npos;) {
    lines.emplace_back(text.substr(0, newline));
    text.remove_prefix(newline + 1);
  }
  lines.emplace_back(text);
  return lines;
}

}  // namespace

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (const char c : text) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return width;
}

std::vector<std::string> Wrap(std::string_view text, size_t width) {
  std::vector<std::string> lines;
  while (DisplayWidth(text) > width) {
    const size_t limit = ByteOffset(text, width);
    const size_t space = text.rfind(' ', limit);
    const size_t cut = space == std::string_view::npos || space == 0 ? limit : space;
    lines.emplace_back(text.substr(0, cut));
    text.remove_prefix(cut);
    if (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  }
  lines.emplace_back(text);
  return lines;
}

std::string PadRight(std::string_view text, size_t width) {
  const size_t shown = DisplayWidth(text);
  return std::string(text) + std::string(shown < width ? width - shown : 0, ' ');
}

std::string Boxed(const std::vector<std::string>& top, const std::vector<std::string>& edged,
                  std::string_view edge) {
  const std::string rule = Repeat("─", kBoxWidth + 2);
  std::string out = "┌" + rule + "┐\n";
  auto draw = [&](const std::vector<std::string>& lines, std::string_view prefix) {
    const size_t inner = kBoxWidth - DisplayWidth(prefix);
    for (const std::string& line : lines) {
      if (line == "---") {
        out += "├" + rule + "┤\n";
        continue;
      }
      // A message's own line breaks (Slack's "title\nsubtitle") start lines of the box too.
      for (const std::string& broken : SplitLines(line)) {
        for (const std::string& part : Wrap(broken, inner)) {
          out += "│ " + std::string(prefix) + PadRight(part, inner) + " │\n";
        }
      }
    }
  };
  draw(top, "");
  draw(edged, edge);
  return out + "└" + rule + "┘\n";
}

std::vector<std::string> Table(const std::vector<std::pair<std::string, std::string>>& rows) {
  size_t width = 0;
  for (const auto& [label, value] : rows) width = std::max(width, DisplayWidth(label));
  std::vector<std::string> lines;
  for (const auto& [label, value] : rows) lines.push_back(PadRight(label, width + 2) + value);
  return lines;
}

}  // namespace tr::notify_preview
