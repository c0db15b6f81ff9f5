// Writing a block-style YAML document straight into a string, in the layout yaml-cpp's emitter
// gives the same document (two spaces of indent, a sequence indented under its key, an empty
// one as "[]" on the line below it), for the files the reconciler writes most often: a status file
// rendered with yaml-cpp cost about a tenth of the daemon's CPU in a fleet rollout, most of it the
// emitter's state machine and its check of every scalar.
//
// A key is written as it is when IsPlainKey holds (every key of a status file but a label's
// odd one), double-quoted otherwise. Strings are double-quoted as yaml-cpp's DoubleQuoted writes
// them (AppendDoubleQuoted).
//
// Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tr::core {

// `text` double-quoted the way yaml-cpp 0.7 writes a DoubleQuoted string: \" \\ \n \t \r \b \f,
// other control characters, U+0080..U+00A0 and the byte order mark as \x, \u or \U escapes,
// everything else as UTF-8; a byte sequence that is not UTF-8 becomes U+FFFD.
void AppendDoubleQuoted(std::string& out, std::string_view text);

// Whether yaml-cpp writes `text` plain, as it is, with no style asked: true for a word, an ASCII
// letter followed by ASCII letters and digits, other than YAML's null words ("null", "Null",
// "NULL"). (yaml-cpp writes some other texts plain too, after a check of its own grammar.)
bool IsPlainYamlWord(std::string_view text);

// Whether `key` can be written as it is: ASCII letters, digits, '.', '_', '-' and '/', a letter
// or digit first, and not one of YAML's null words. Others are written double-quoted.
bool IsPlainKey(std::string_view key);

class YamlWriter {
 public:
  // key: "value"
  void String(std::string_view key, std::string_view value);
  // key: value, the value as it is: a number, true or false, or a constant the caller knows to
  // be a plain scalar.
  void Plain(std::string_view key, std::string_view value);
  // key: value for a word (IsPlainYamlWord: as yaml-cpp writes it), key: "value" otherwise.
  void Word(std::string_view key, std::string_view value);
  void Bool(std::string_view key, bool value) { Plain(key, value ? "true" : "false"); }
  void Number(std::string_view key, int64_t value);
  void Number(std::string_view key, uint64_t value);

  // key:, then the map's entries one level in, until EndMap.
  void BeginMap(std::string_view key);
  void EndMap() { indent_ -= 2; }
  // key:, then its items one level in, until EndSeq; "[]" one level in when `empty`.
  void BeginSeq(std::string_view key, bool empty);
  void EndSeq() { indent_ -= 2; }
  // A map as the next item of a sequence: its first entry goes on the dash's line.
  void BeginItem();
  void EndItem() { indent_ -= 2; }
  // - "value"
  void StringItem(std::string_view value);
  // - {flow} or key: {flow}, `flow` already written (FlowMap).
  void FlowItem(const std::string& flow);
  void Flow(std::string_view key, const std::string& flow);

  // The document, ending in a newline.
  std::string Take() { return std::move(out_); }

 private:
  void Indent();
  void KeyLine(std::string_view key);  // the indent or the dash, then `key:`

  std::string out_;
  int indent_ = 0;
  bool dash_ = false;  // the next line opens a sequence item
};

// A flow map {key: value, ...} built entry by entry, for YamlWriter::Flow and FlowItem.
class FlowMap {
 public:
  FlowMap& String(std::string_view key, std::string_view value);
  FlowMap& Number(std::string_view key, uint64_t value);
  std::string Take() { return std::move(text_) + "}"; }

 private:
  void Key(std::string_view key);
  std::string text_ = "{";
};

}  // namespace tr::core
