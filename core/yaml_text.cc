#include "core/yaml_text.h"

#include <cstdint>

#include "fmt/format.h"

namespace tr::core {
namespace {

// One decoded character, or the reason its bytes are not UTF-8.
struct DecodedCodePoint {
  uint32_t code_point = 0;
  size_t length = 0;  // bytes consumed; 0 on error
  const char* error = nullptr;
};

bool IsContinuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Decodes the sequence at `text[i]` following Unicode's table of well-formed byte sequences
// (Unicode 15, table 3-7): the second byte's range rules out overlongs and surrogates.
DecodedCodePoint DecodeAt(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) return {lead, 1, nullptr};
  if (IsContinuation(lead)) return {0, 0, "invalid UTF-8: unexpected continuation byte"};
  if (lead == 0xC0 || lead == 0xC1) return {0, 0, "invalid UTF-8: overlong encoding"};
  if (lead > 0xF4) return {0, 0, "invalid UTF-8: byte can never appear in UTF-8"};
  const size_t length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  if (i + length > text.size()) return {0, 0, "invalid UTF-8: truncated sequence"};
  const auto second = static_cast<unsigned char>(text[i + 1]);
  if (!IsContinuation(second)) return {0, 0, "invalid UTF-8: truncated sequence"};
  if (lead == 0xE0 && second < 0xA0) return {0, 0, "invalid UTF-8: overlong encoding"};
  if (lead == 0xF0 && second < 0x90) return {0, 0, "invalid UTF-8: overlong encoding"};
  if (lead == 0xED && second > 0x9F) return {0, 0, "invalid UTF-8: encoded surrogate"};
  if (lead == 0xF4 && second > 0x8F) return {0, 0, "invalid UTF-8: code point above U+10FFFF"};
  uint32_t cp = lead & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07);
  for (size_t k = 1; k < length; ++k) {
    const auto byte = static_cast<unsigned char>(text[i + k]);
    if (!IsContinuation(byte)) return {0, 0, "invalid UTF-8: truncated sequence"};
    cp = (cp << 6) | (byte & 0x3F);
  }
  return {cp, length, nullptr};
}

// Why YAML does not allow this character at `offset`, or an empty string when it does.
std::string Disallowed(uint32_t cp, size_t offset) {
  if (cp == 0) return "NUL byte is not allowed";
  if (cp == '\t' || cp == '\n' || cp == '\r') return "";
  if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F && cp != 0x85)) {
    return fmt::format("control character U+{:04X} is not allowed", cp);
  }
  if (cp == 0xFEFF && offset != 0) return "byte order mark is only allowed at the start";
  if (cp == 0xFFFE || cp == 0xFFFF) return fmt::format("non-character U+{:04X} is not allowed", cp);
  return "";
}

}  // namespace

std::optional<YamlTextError> CheckYamlText(std::string_view text) {
  int line = 1;
  size_t line_start = 0;
  size_t i = 0;
  if (text.starts_with("\xEF\xBB\xBF")) {
    i = 3;
    line_start = 3;  // yaml-cpp does not count the byte order mark as a column
  }
  while (i < text.size()) {
    const DecodedCodePoint d = DecodeAt(text, i);
    std::string message = d.error != nullptr ? d.error : Disallowed(d.code_point, i);
    if (!message.empty()) {
      return YamlTextError{.offset = i,
                           .line = line,
                           .column = static_cast<int>(i - line_start) + 1,
                           .message = std::move(message)};
    }
    i += d.length;
    if (d.code_point == '\n') {
      ++line;
      line_start = i;
    }
  }
  return std::nullopt;
}

std::string MessageSafe(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (out.size() >= max_bytes) return out + "...";
    const DecodedCodePoint d = DecodeAt(text, i);
    if (d.error != nullptr) {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    const uint32_t cp = d.code_point;
    if (cp < 0x20 || cp == 0x7F) {
      out += fmt::format("\\x{:02X}", cp);
    } else if ((cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
               (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E ||
               cp == 0x200F || cp == 0x061C) {
      out += fmt::format("\\u{{{:04X}}}", cp);
    } else {
      out.append(text.substr(i, d.length));
    }
    i += d.length;
  }
  return out;
}

}  // namespace tr::core
