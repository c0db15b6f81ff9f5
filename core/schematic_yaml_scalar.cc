#include "core/schematic_yaml_scalar.h"

#include <algorithm>

#include "fmt/format.h"

namespace tr::core {
namespace {

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Characters that never start, end or change a plain scalar in block context when they
// appear after a letter or digit (':' only when not last: "a:" would start a mapping).
bool IsPlainInner(char c) {
  return IsAsciiAlnum(c) || std::string_view("-_./=,+:@%~()").find(c) != std::string_view::npos;
}

// Words YAML resolves to booleans or null (1.1 and 1.2, any case).
bool IsReservedWord(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  static constexpr std::string_view kWords[] = {"true", "false", "yes", "no",   "on",
                                                "off",  "y",     "n",   "null", "~"};
  return std::find(std::begin(kWords), std::end(kWords), lower) != std::end(kWords);
}

// Could resolve to a number (int, float, hex, octal, base 60): starts like one and holds
// nothing a number cannot.
bool MayBeNumber(std::string_view text) {
  const char first = text.front();
  if (!((first >= '0' && first <= '9') || first == '+' || first == '-' || first == '.')) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || std::string_view("+-._:xXoObBeEaAcCdDfFiInN").find(c) !=
                                          std::string_view::npos;
  });
}

std::string DoubleQuoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02X}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

bool IsPlainSafeString(std::string_view text) {
  if (text.empty() || !IsAsciiAlnum(text.front()) || text.back() == ':') return false;
  if (IsReservedWord(text) || MayBeNumber(text)) return false;
  return std::all_of(text.begin(), text.end(), IsPlainInner);
}

std::string SchematicYamlScalar(std::string_view text) {
  return IsPlainSafeString(text) ? std::string(text) : DoubleQuoted(text);
}

}  // namespace tr::core
