#include "core/yaml_writer.h"

#include <algorithm>

#include "fmt/format.h"

namespace tr::core {
namespace {

constexpr int kReplacementCharacter = 0xFFFD;

// How many bytes a UTF-8 sequence with this lead byte has; -1 for a byte no sequence starts
// with (yaml-cpp's reading: 0xF8..0xFF count as four).
int SequenceLength(unsigned char lead) {
  switch (lead >> 4) {
    case 12:
    case 13:
      return 2;
    case 14:
      return 3;
    case 15:
      return 4;
    default:
      return lead < 0x80 ? 1 : -1;
  }
}

// The next code point of `text` from `at`, as yaml-cpp 0.7 decodes it (emitterutils.cpp,
// GetNextCodePointAndAdvance): a bad lead byte is one U+FFFD; a sequence cut short is one
// U+FFFD and the byte that cut it is read again; surrogates, noncharacters and values above
// U+10FFFF are U+FFFD.
int NextCodePoint(std::string_view text, size_t& at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  int length = SequenceLength(lead);
  ++at;
  if (length < 0) return kReplacementCharacter;
  if (length == 1) return lead;
  int code = lead & ~(0xFF << (7 - length));
  for (--length; length > 0; --length, ++at) {
    if (at == text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80) {
      return kReplacementCharacter;
    }
    code = (code << 6) | (static_cast<unsigned char>(text[at]) & 0x3F);
  }
  const bool invalid = code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF) ||
                       (code & 0xFFFE) == 0xFFFE || (code >= 0xFDD0 && code <= 0xFDEF);
  return invalid ? kReplacementCharacter : code;
}

void AppendCodePoint(std::string& out, int code) {
  if (code <= 0x7F) {
    out += static_cast<char>(code);
  } else if (code <= 0x7FF) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code <= 0xFFFF) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

void AppendEscape(std::string& out, int code) {
  if (code < 0xFF) {
    out += fmt::format("\\x{:02x}", code);
  } else if (code < 0xFFFF) {
    out += fmt::format("\\u{:04x}", code);
  } else {
    out += fmt::format("\\U{:08x}", code);
  }
}

// A byte that is not printable ASCII, or a quote or backslash.
bool NeedsALook(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte >= 0x80 || c == '"' || c == '\\';
}

const char* ShortEscape(int code) {
  switch (code) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    default:
      return nullptr;
  }
}

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool IsAsciiAlnum(char c) { return IsAsciiLetter(c) || (c >= '0' && c <= '9'); }

bool IsNullWord(std::string_view text) {
  return text == "null" || text == "Null" || text == "NULL";
}

}  // namespace

void AppendDoubleQuoted(std::string& out, std::string_view text) {
  out += '"';
  for (size_t at = 0; at < text.size();) {
    // Most of a status is printable ASCII: copied as a run.
    const auto special = std::find_if(text.begin() + at, text.end(), NeedsALook);
    const auto run_end = static_cast<size_t>(special - text.begin());
    out.append(text, at, run_end - at);
    at = run_end;
    if (at == text.size()) break;
    const int code = NextCodePoint(text, at);
    if (const char* escape = ShortEscape(code)) {
      out += escape;
    } else if (code < 0x20 || (code >= 0x80 && code <= 0xA0) || code == 0xFEFF) {
      AppendEscape(out, code);
    } else {
      AppendCodePoint(out, code);
    }
  }
  out += '"';
}

bool IsPlainYamlWord(std::string_view text) {
  if (text.empty() || !IsAsciiLetter(text.front()) || IsNullWord(text)) return false;
  return std::all_of(text.begin(), text.end(), IsAsciiAlnum);
}

bool IsPlainKey(std::string_view key) {
  if (key.empty() || !IsAsciiAlnum(key.front()) || IsNullWord(key)) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return IsAsciiAlnum(c) || c == '.' || c == '_' || c == '-' || c == '/';
  });
}

void YamlWriter::Indent() {
  if (dash_) {
    out_.append(static_cast<size_t>(indent_ - 2), ' ');
    out_ += "- ";
    dash_ = false;
  } else {
    out_.append(static_cast<size_t>(indent_), ' ');
  }
}

void YamlWriter::KeyLine(std::string_view key) {
  Indent();
  if (IsPlainKey(key)) {
    out_ += key;
  } else {
    AppendDoubleQuoted(out_, key);
  }
  out_ += ':';
}

void YamlWriter::String(std::string_view key, std::string_view value) {
  KeyLine(key);
  out_ += ' ';
  AppendDoubleQuoted(out_, value);
  out_ += '\n';
}

void YamlWriter::Plain(std::string_view key, std::string_view value) {
  KeyLine(key);
  out_ += ' ';
  out_ += value;
  out_ += '\n';
}

void YamlWriter::Word(std::string_view key, std::string_view value) {
  if (IsPlainYamlWord(value)) {
    Plain(key, value);
  } else {
    String(key, value);
  }
}

void YamlWriter::Number(std::string_view key, int64_t value) {
  Plain(key, fmt::format("{}", value));
}

void YamlWriter::Number(std::string_view key, uint64_t value) {
  Plain(key, fmt::format("{}", value));
}

void YamlWriter::BeginMap(std::string_view key) {
  KeyLine(key);
  out_ += '\n';
  indent_ += 2;
}

void YamlWriter::BeginSeq(std::string_view key, bool empty) {
  KeyLine(key);
  out_ += '\n';
  indent_ += 2;
  if (empty) {
    out_.append(static_cast<size_t>(indent_), ' ');
    out_ += "[]\n";
  }
}

void YamlWriter::BeginItem() {
  indent_ += 2;
  dash_ = true;
}

void YamlWriter::StringItem(std::string_view value) {
  out_.append(static_cast<size_t>(indent_), ' ');
  out_ += "- ";
  AppendDoubleQuoted(out_, value);
  out_ += '\n';
}

void YamlWriter::FlowItem(const std::string& flow) {
  out_.append(static_cast<size_t>(indent_), ' ');
  out_ += "- ";
  out_ += flow;
  out_ += '\n';
}

void YamlWriter::Flow(std::string_view key, const std::string& flow) {
  KeyLine(key);
  out_ += ' ';
  out_ += flow;
  out_ += '\n';
}

void FlowMap::Key(std::string_view key) {
  if (text_.size() > 1) text_ += ", ";
  text_ += key;
  text_ += ": ";
}

FlowMap& FlowMap::String(std::string_view key, std::string_view value) {
  Key(key);
  AppendDoubleQuoted(text_, value);
  return *this;
}

FlowMap& FlowMap::Number(std::string_view key, uint64_t value) {
  Key(key);
  text_ += fmt::format("{}", value);
  return *this;
}

}  // namespace tr::core
