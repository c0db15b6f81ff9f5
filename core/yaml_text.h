// The byte-level check that runs before any YAML parser sees a file: well-formed UTF-8 and
// only the characters YAML allows (YAML 1.2 §5.1 "printable").
//
// Refused: bytes that are not UTF-8 (stray continuation bytes, 0xC0/0xC1/0xF5..0xFF, truncated
// sequences, overlong forms, encoded surrogates, code points above U+10FFFF); NUL and the other
// C0 controls except tab, LF and CR; DEL; C1 controls except U+0085; U+FFFE and U+FFFF; a byte
// order mark anywhere but at the very start.
//
// Pure; thread-compatible.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tr::core {

struct YamlTextError {
  size_t offset = 0;  // of the first offending byte
  int line = 1;       // 1-based; lines end at LF
  int column = 1;     // 1-based, in bytes, not counting a leading byte order mark
  std::string message;
};

// nullopt when every byte is acceptable; otherwise the first problem.
std::optional<YamlTextError> CheckYamlText(std::string_view text);

// Diagnostics quote what a file says, and they end up in terminals and CI logs (where a
// newline could forge an annotation). Returns `text` with control characters, invalid UTF-8,
// line/paragraph separators and bidirectional controls escaped (\x1B, \u{202E}), cut to about
// `max_bytes` with "..." appended when anything was cut.
std::string MessageSafe(std::string_view text, size_t max_bytes = 400);

}  // namespace tr::core
