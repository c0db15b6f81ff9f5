// A strict, safe YAML reader for files people write by hand and attackers may write too.
//
// It reads one YAML document into a small tree of scalars, sequences and mappings in which
// every node keeps its 1-based line and column (columns count bytes, as yaml-cpp does).
// Scalars keep their text exactly as written (after YAML unescaping); no type is resolved,
// so `version: 1.10` stays the text "1.10". Decoders decide what a scalar may be.
//
// Refused, each as a Diagnostic naming file:line:column and the field path:
//   - input over 1 MiB (checked before parsing);
//   - invalid UTF-8 (overlong forms, encoded surrogates, truncated sequences), NUL and other
//     control characters, and a byte order mark anywhere but the start (checked before parsing);
//   - anchors and aliases (refused at the first anchor, before anything could be expanded);
//   - every explicit tag, the core ones (`!!str`, `!!int`) included: quote a value instead;
//   - nesting deeper than 64 collections (the reader stops yaml-cpp at depth 65, so its
//     recursion stays shallow whatever the input);
//   - more than one document; duplicate keys; keys that are not plain strings;
//   - an empty file, or one that holds only comments, or a document that is only `---`.
// Syntax errors come from yaml-cpp and keep its position and wording.
//
// Pure and thread-compatible: no shared state; concurrent calls are safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"

namespace tr::core {

inline constexpr size_t kMaxYamlBytes = size_t{1} << 20;
inline constexpr int kMaxYamlDepth = 64;
// Decoders stop reporting after this many diagnostics for one file (and say so).
inline constexpr size_t kMaxDiagnosticsPerFile = 50;

struct YamlMark {
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based byte column; 0 when unknown
};

struct YamlEntry;

struct YamlNode {
  enum class Kind { kNull, kScalar, kSequence, kMapping };

  Kind kind = Kind::kNull;  // kNull: nothing was written (`key:`)
  YamlMark mark;
  std::string text;                // kScalar: the value as written, unescaped, untyped
  bool plain = false;              // kScalar: written without quotes or a block indicator (| >)
  std::vector<YamlNode> items;     // kSequence, in order
  std::vector<YamlEntry> entries;  // kMapping, in order; keys are unique

  bool IsScalar() const { return kind == Kind::kScalar; }
  bool IsSequence() const { return kind == Kind::kSequence; }
  bool IsMapping() const { return kind == Kind::kMapping; }
  // The value under `key` of a mapping; nullptr when absent or this is not a mapping.
  const YamlNode* Find(std::string_view key) const;
};

struct YamlEntry {
  std::string key;
  YamlMark key_mark;
  YamlNode value;
};

// "a mapping", "a list", "a string", "nothing": for messages such as "must be a list, not a
// string".
std::string_view DescribeKind(const YamlNode& node);

// Appends a key or an index to a field path: ("spec", "nodes") -> "spec.nodes";
// ("spec.nodes", 2) -> "spec.nodes[2]"; keys other than [A-Za-z0-9_.-] are quoted: `a["b c"]`.
std::string JoinPath(std::string_view path, std::string_view key);
std::string JoinPath(std::string_view path, size_t index);

struct ParsedYaml {
  std::optional<YamlNode> root;  // set exactly when `diagnostics` is empty
  Diagnostics diagnostics;       // every diagnostic names `file`; most a position too
};

// Parses `content` (the bytes of `file`, a repository-relative path used in diagnostics).
// On success `root` holds the document; otherwise `diagnostics` says why (duplicate keys are
// all reported; other errors stop the parse at the first one).
ParsedYaml ParseStrictYaml(std::string_view file, std::string_view content);

}  // namespace tr::core
