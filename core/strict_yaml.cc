#include "core/strict_yaml.h"

#include <exception>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "core/yaml_text.h"
#include "fmt/format.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/mark.h"
#include "yaml-cpp/parser.h"

namespace tr::core {
namespace {

// Thrown by the event handler to stop yaml-cpp at once; caught only in ParseStrictYaml.
struct ParseStop {
  YamlMark mark;
  std::string path;
  std::string message;
};

YamlMark ToMark(const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0 || mark.column < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

// yaml-cpp reports "?" for an untagged plain node and "!" for an untagged quoted or block
// scalar (and for the explicit non-specific tag `!`, which only means "a string"). Every other
// tag was written explicitly.
bool IsExplicitTag(const std::string& tag) { return !tag.empty() && tag != "?" && tag != "!"; }

std::string ShowTag(const std::string& tag) {
  constexpr std::string_view kCorePrefix = "tag:yaml.org,2002:";
  if (tag.starts_with(kCorePrefix)) return "!!" + tag.substr(kCorePrefix.size());
  return tag;
}

bool IsPlainNullKey(const YamlNode& node) {
  return node.plain && (node.text.empty() || node.text == "~" || node.text == "null" ||
                        node.text == "Null" || node.text == "NULL");
}

Diagnostic At(std::string_view file, YamlMark mark, std::string_view path,
              std::string_view message) {
  return {.file = MessageSafe(file, 400),
          .line = mark.line,
          .column = mark.column,
          .path = MessageSafe(path, 400),
          .message = MessageSafe(message, 400)};
}

// Builds a YamlNode tree from yaml-cpp's parse events, enforcing the reader's rules as the
// events arrive, so that nothing is built or recursed into past a refusal.
class TreeBuilder : public YAML::EventHandler {
 public:
  explicit TreeBuilder(Diagnostics& diagnostics, std::string_view file)
      : diagnostics_(diagnostics), file_(file) {}

  std::optional<YamlNode>& root() { return root_; }
  int documents() const { return documents_; }
  YamlMark last_mark() const { return last_mark_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    Seen(mark);
    if (++documents_ > 1) Stop("", "only one YAML document is allowed per file");
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Seen(mark);
    RefuseAnchor(anchor);
    YamlNode node;
    node.mark = last_mark_;
    Add(std::move(node));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override {
    Seen(mark);
    Stop(SlotPath(), "aliases (*name) are not allowed");
  }
  void OnAnchor(const YAML::Mark& mark, const std::string& name) override {
    Seen(mark);
    Stop(SlotPath(), fmt::format("anchors (&{}) are not allowed", name));
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    Seen(mark);
    RefuseTag(tag);
    RefuseAnchor(anchor);
    YamlNode node;
    node.kind = YamlNode::Kind::kScalar;
    node.mark = last_mark_;
    node.text = value;
    node.plain = tag == "?";
    Add(std::move(node));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    Open(mark, tag, anchor, YamlNode::Kind::kSequence);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    Open(mark, tag, anchor, YamlNode::Kind::kMapping);
  }
  void OnMapEnd() override { Close(); }

 private:
  // A collection being built.
  struct Frame {
    YamlNode node;
    bool has_key = false;  // mappings: a key was read, its value is next
    std::string key;
    YamlMark key_mark;
    std::unordered_map<std::string, YamlMark> seen_keys;  // mappings: for duplicates
  };

  void Seen(const YAML::Mark& mark) {
    const YamlMark m = ToMark(mark);
    if (m.line > 0) last_mark_ = m;
  }

  [[noreturn]] void Stop(std::string path, std::string message) const {
    throw ParseStop{last_mark_, std::move(path), std::move(message)};
  }

  void RefuseAnchor(YAML::anchor_t anchor) const {
    if (anchor != YAML::NullAnchor) Stop(SlotPath(), "anchors (&name) are not allowed");
  }

  void RefuseTag(const std::string& tag) const {
    if (IsExplicitTag(tag)) {
      Stop(SlotPath(), fmt::format("tags such as \"{}\" are not allowed; quote the value instead",
                                   ShowTag(tag)));
    }
  }

  bool ExpectingKey() const {
    return !frames_.empty() && frames_.back().node.IsMapping() && !frames_.back().has_key;
  }

  void Open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
            YamlNode::Kind kind) {
    Seen(mark);
    RefuseTag(tag);
    RefuseAnchor(anchor);
    if (ExpectingKey()) Stop(PathOf(frames_.size()), "mapping keys must be plain strings");
    if (static_cast<int>(frames_.size()) >= kMaxYamlDepth) {
      Stop(SlotPath(), fmt::format("nesting is deeper than {} levels", kMaxYamlDepth));
    }
    Frame frame;
    frame.node.kind = kind;
    frame.node.mark = last_mark_;
    frames_.push_back(std::move(frame));
  }

  void Close() {
    YamlNode node = std::move(frames_.back().node);
    frames_.pop_back();
    Add(std::move(node));
  }

  // Puts a finished node where the innermost open collection expects its next item.
  void Add(YamlNode node) {
    if (frames_.empty()) {
      root_ = std::move(node);
      return;
    }
    Frame& top = frames_.back();
    if (top.node.IsSequence()) {
      top.node.items.push_back(std::move(node));
    } else if (!top.has_key) {
      if (!node.IsScalar() || IsPlainNullKey(node)) {
        Stop(PathOf(frames_.size()), "mapping keys must be plain strings");
      }
      top.has_key = true;
      top.key = std::move(node.text);
      top.key_mark = node.mark;
    } else {
      top.has_key = false;
      // yaml-cpp places an omitted value where the next token starts; point at its key.
      if (node.kind == YamlNode::Kind::kNull) node.mark = top.key_mark;
      auto [it, inserted] = top.seen_keys.emplace(top.key, top.key_mark);
      if (!inserted) {
        if (diagnostics_.size() + 1 >= kMaxDiagnosticsPerFile)
          Stop("", "too many errors; stopping here");
        diagnostics_.push_back(
            At(file_, top.key_mark, JoinPath(PathOf(frames_.size()), top.key),
               fmt::format("duplicate key \"{}\" (first at line {})", top.key, it->second.line)));
        return;
      }
      top.node.entries.push_back({std::move(top.key), top.key_mark, std::move(node)});
    }
  }

  // The field path of the collection at depth `depth` (1 = the root collection).
  std::string PathOf(size_t depth) const {
    std::string path;
    for (size_t i = 0; i + 1 < depth; ++i) {
      const Frame& parent = frames_[i];
      path = parent.node.IsSequence() ? JoinPath(path, parent.node.items.size())
                                      : JoinPath(path, parent.key);
    }
    return path;
  }

  // The field path of the node that the next event will produce.
  std::string SlotPath() const {
    if (frames_.empty()) return "";
    const Frame& top = frames_.back();
    const std::string parent = PathOf(frames_.size());
    if (top.node.IsSequence()) return JoinPath(parent, top.node.items.size());
    return top.has_key ? JoinPath(parent, top.key) : parent;
  }

  Diagnostics& diagnostics_;  // duplicate keys, which do not stop the parse
  std::string_view file_;
  std::vector<Frame> frames_;
  std::optional<YamlNode> root_;
  int documents_ = 0;
  YamlMark last_mark_{1, 1};
};

bool IsPathKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

}  // namespace

const YamlNode* YamlNode::Find(std::string_view key) const {
  for (const YamlEntry& entry : entries) {
    if (entry.key == key) return &entry.value;
  }
  return nullptr;
}

std::string_view DescribeKind(const YamlNode& node) {
  switch (node.kind) {
    case YamlNode::Kind::kNull:
      return "nothing";
    case YamlNode::Kind::kScalar:
      return "a string";
    case YamlNode::Kind::kSequence:
      return "a list";
    case YamlNode::Kind::kMapping:
      return "a mapping";
  }
  return "nothing";
}

std::string JoinPath(std::string_view path, std::string_view key) {
  bool simple = !key.empty();
  for (char c : key) simple = simple && IsPathKeyChar(c);
  if (!simple) return fmt::format("{}[\"{}\"]", path, key);
  if (path.empty()) return std::string(key);
  return fmt::format("{}.{}", path, key);
}

std::string JoinPath(std::string_view path, size_t index) {
  return fmt::format("{}[{}]", path, index);
}

// The one place where yaml-cpp's exceptions become Diagnostics.
ParsedYaml ParseStrictYaml(std::string_view file, std::string_view content) {
  ParsedYaml result;
  if (content.size() > kMaxYamlBytes) {
    result.diagnostics.push_back(At(file, {}, "", "file is larger than 1 MiB"));
    return result;
  }
  if (std::optional<YamlTextError> bad = CheckYamlText(content)) {
    result.diagnostics.push_back(At(file, {bad->line, bad->column}, "", bad->message));
    return result;
  }
  std::istringstream stream{std::string(content)};
  TreeBuilder builder(result.diagnostics, file);
  try {
    YAML::Parser parser(stream);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const ParseStop& stop) {
    result.diagnostics.push_back(At(file, stop.mark, stop.path, stop.message));
  } catch (const YAML::Exception& e) {
    const YamlMark mark = ToMark(e.mark);
    result.diagnostics.push_back(
        At(file, mark.line > 0 ? mark : builder.last_mark(), "", "invalid YAML: " + e.msg));
  } catch (const std::exception& e) {
    result.diagnostics.push_back(
        At(file, builder.last_mark(), "", fmt::format("invalid YAML: {}", e.what())));
  }
  if (!result.diagnostics.empty()) return result;
  if (builder.documents() == 0 || !builder.root() ||
      builder.root()->kind == YamlNode::Kind::kNull) {
    result.diagnostics.push_back(At(file, {1, 1}, "", "file is empty"));
    return result;
  }
  result.root = std::move(builder.root());
  return result;
}

}  // namespace tr::core
