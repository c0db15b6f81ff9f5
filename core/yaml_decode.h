// Building blocks for core's decoders, which turn a strict YAML tree (strict_yaml.h) into
// typed values and report every problem they meet instead of stopping at the first.
//
// A decoder walks the tree with `Field`s (a node plus its field path). Each Read* function
// returns the value, or nullopt after recording why in the DecodeContext; a Field whose node
// is absent (an optional key that was not written) reads as nullopt without an error.
// Scalars are typed strictly: a string field refuses null and YAML 1.1 booleans (`yes`,
// `off`) unless quoted; bool and number fields refuse quoted text.
//
// Not thread-safe: one DecodeContext per file being decoded.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/decoded.h"
#include "core/diagnostic.h"
#include "core/strict_yaml.h"
#include "core/version.h"

namespace tr::core {

// Collects the diagnostics of one file, at most kMaxDiagnosticsPerFile of them.
class DecodeContext {
 public:
  explicit DecodeContext(std::string file) : file_(std::move(file)) {}

  void Error(YamlMark mark, std::string path, std::string message);
  const std::string& file() const { return file_; }
  bool has_errors() const { return errors_ > 0; }
  // From now on a mapping's unknown keys are no errors (MappingReader leaves them): for files a
  // newer build may have written with fields this one does not know.
  void IgnoreUnknownKeys(bool ignore = true) { ignore_unknown_keys_ = ignore; }
  bool ignores_unknown_keys() const { return ignore_unknown_keys_; }
  size_t error_count() const { return errors_; }  // so a part can tell whether it added any
  // Moves the diagnostics out, in file order (line, then column); a final "too many errors"
  // note stays last.
  Diagnostics TakeDiagnostics();

 private:
  std::string file_;
  Diagnostics diagnostics_;
  size_t errors_ = 0;
  bool ignore_unknown_keys_ = false;
};

struct Field {
  DecodeContext* ctx = nullptr;
  const YamlNode* node = nullptr;  // nullptr: the key was not written
  std::string path;
  YamlMark mark;  // where to point when `node` is absent: the enclosing mapping

  bool present() const { return node != nullptr; }
  void Error(std::string message) const;  // at the node, or at `mark` when absent
};

// The whole document as a Field with an empty path.
Field RootField(DecodeContext& ctx, const YamlNode& root);

// The envelope of every document decoder: parses `content` (file `path`) strictly and decodes
// the root with `decode_root(Field) -> T`. The result holds the parse's diagnostics, else the
// decoder's errors (every one, not just the first), else the value.
template <typename T, typename DecodeRoot>
Decoded<T> DecodeYamlDocument(std::string_view path, std::string_view content,
                              DecodeRoot&& decode_root) {
  Decoded<T> result;
  ParsedYaml parsed = ParseStrictYaml(path, content);
  if (!parsed.root) {
    result.diagnostics = std::move(parsed.diagnostics);
    return result;
  }
  DecodeContext ctx{std::string(path)};
  T value = decode_root(RootField(ctx, *parsed.root));
  if (ctx.has_errors()) {
    result.diagnostics = ctx.TakeDiagnostics();
  } else {
    result.value = std::move(value);
  }
  return result;
}

// A mapping whose keys must all be in `known`; every other key is reported as unknown (with a
// suggestion when one is close), unless the context ignores unknown keys. Reports when the node
// is not a mapping.
class MappingReader {
 public:
  MappingReader(const Field& field, std::initializer_list<std::string_view> known);
  MappingReader(const Field& field, const std::vector<std::string_view>& known);

  bool ok() const { return map_ != nullptr; }  // the node is a mapping
  Field Optional(std::string_view key) const;
  // As Optional, and reports "is required" (at the mapping) when the key is missing.
  Field Required(std::string_view key) const;

 private:
  Field field_;
  const YamlNode* map_ = nullptr;
};

struct FieldEntry {
  std::string key;
  YamlMark key_mark;
  Field value;

  void KeyError(std::string message) const;  // at the key
};
// The `apiVersion` and `kind` keys of a document's top mapping: both required, both exact.
void CheckHeader(const MappingReader& top, std::string_view api_version, std::string_view kind);

// Every entry of a mapping, in file order, whatever the keys; reports when not a mapping.
std::vector<FieldEntry> ReadMapEntries(const Field& field);
// The items of a list; reports when the node is not a list. Empty when absent.
std::vector<Field> ReadList(const Field& field);

std::optional<std::string> ReadString(const Field& field);
// A string that `check` accepts; its message is the error otherwise.
std::optional<std::string> ReadChecked(const Field& field,
                                       absl::Status (*check)(std::string_view));
std::optional<bool> ReadBool(const Field& field);
std::optional<int64_t> ReadInteger(const Field& field, int64_t min, int64_t max);
std::optional<double> ReadNumber(const Field& field);
// Refuses zero unless `allow_zero`.
std::optional<std::chrono::seconds> ReadDuration(const Field& field, bool allow_zero);
std::optional<Version> ReadTalosVersion(const Field& field);
std::optional<Version> ReadKubernetesVersion(const Field& field);
std::optional<MinorVersion> ReadMinorVersion(const Field& field);
// A mapping of Kubernetes labels (names.h: CheckLabelKey, CheckLabelValue). Every bad key and
// value is reported, so one does not hide the next. Empty when absent.
std::map<std::string, std::string> ReadLabels(const Field& field);

// One of `choices` by its spelling; reports "must be a, b or c" otherwise.
template <typename E>
std::optional<E> ReadEnum(const Field& field,
                          std::initializer_list<std::pair<std::string_view, E>> choices);

// "a or b", "a, b or c".
std::string ListChoices(const std::vector<std::string_view>& words);

template <typename E>
std::optional<E> ReadEnum(const Field& field,
                          std::initializer_list<std::pair<std::string_view, E>> choices) {
  std::optional<std::string> text = ReadString(field);
  if (!text) return std::nullopt;
  std::vector<std::string_view> words;
  for (const auto& [word, value] : choices) {
    if (*text == word) return value;
    words.push_back(word);
  }
  field.Error("must be " + ListChoices(words));
  return std::nullopt;
}

}  // namespace tr::core
