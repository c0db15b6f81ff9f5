#include "core/yaml_word.h"

#include <algorithm>
#include <ostream>
#include <string>

namespace tr::core {
namespace {

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// yaml-cpp streams this as it does a number: into the document, with no check and no quotes.
struct Verbatim {
  std::string_view text;
};

std::ostream& operator<<(std::ostream& os, const Verbatim& v) { return os << v.text; }

}  // namespace

bool IsPlainYamlWord(std::string_view text) {
  if (text.empty() || !IsAsciiLetter(text.front())) return false;
  if (text == "null" || text == "Null" || text == "NULL") return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return IsAsciiLetter(c) || (c >= '0' && c <= '9'); });
}

YAML::Emitter& operator<<(YAML::Emitter& out, YamlWord word) {
  if (IsPlainYamlWord(word.text)) return out.WriteIntegralType(Verbatim{word.text});
  return out << std::string(word.text);
}

}  // namespace tr::core
