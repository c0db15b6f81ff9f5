#include "core/inert_text.h"

namespace tr::core {
namespace {

// U+200B ZERO WIDTH SPACE, after `@`: shown as nothing, but no longer a mention.
constexpr std::string_view kAfterAt = "@\u200b";

}  // namespace

std::string InertMarkdown(std::string_view text) {
  // What opens emphasis, code, a link or image, an HTML tag, a heading or a table cell; other
  // punctuation stays as it is, so ordinary messages read the same.
  constexpr std::string_view kPunctuation = "\\`*_~|[]()<>!#";
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  for (char c : text) {
    if (c == '@') {
      out += kAfterAt;
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else if (kPunctuation.find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

std::string InertAngleMarkup(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  for (char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '@') {
      out += kAfterAt;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace tr::core
