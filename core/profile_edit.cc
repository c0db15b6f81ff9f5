#include "core/profile_edit.h"

#include <algorithm>
#include <vector>

#include "core/profile.h"
#include "core/strict_yaml.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

struct Edit {
  size_t offset = 0;
  size_t length = 0;
  std::string text;
};

// The byte offset of a 1-based line and column.
std::optional<size_t> OffsetOf(std::string_view content, YamlMark mark) {
  if (mark.line < 1 || mark.column < 1) return std::nullopt;
  size_t offset = 0;
  for (int line = 1; line < mark.line; ++line) {
    offset = content.find('\n', offset);
    if (offset == std::string_view::npos) return std::nullopt;
    ++offset;
  }
  offset += static_cast<size_t>(mark.column - 1);
  if (offset >= content.size()) return std::nullopt;
  return offset;
}

absl::StatusOr<Edit> VersionEdit(std::string_view content, const YamlNode* root,
                                 std::string_view section, const Version& version) {
  const YamlNode* spec = root->Find("spec");
  const YamlNode* part = spec ? spec->Find(section) : nullptr;
  const YamlNode* node = part ? part->Find("version") : nullptr;
  const std::string field = fmt::format("spec.{}.version", section);
  if (node == nullptr || !node->IsScalar()) {
    return absl::InvalidArgumentError(fmt::format("{} is not a scalar", field));
  }
  std::optional<size_t> offset = OffsetOf(content, node->mark);
  if (!offset) return absl::InvalidArgumentError(fmt::format("{}: no position", field));
  std::string replacement = version.ToString();
  if (node->text.starts_with('v')) replacement = "v" + replacement;
  Edit edit{.offset = *offset, .length = node->text.size(), .text = replacement};
  if (const char quote = content[*offset]; quote == '"' || quote == '\'') {
    edit.offset += 1;  // the quotes stay; a version needs no escapes
  }
  if (content.substr(edit.offset, edit.length) != node->text) {
    return absl::InvalidArgumentError(
        fmt::format("{} is written in a form this rewrite does not handle", field));
  }
  return edit;
}

// The offset of the start of `mark`'s line.
std::optional<size_t> LineStart(std::string_view content, YamlMark mark) {
  std::optional<size_t> offset = OffsetOf(content, {mark.line, 1});
  if (!offset && mark.line >= 1) return content.size();
  return offset;
}

// A block mapping's first entry: where a new key goes, indented as it is. nullptr for a flow
// mapping or an empty one.
const YamlEntry* FirstBlockEntry(std::string_view content, const YamlNode& map) {
  if (!map.IsMapping() || map.entries.empty()) return nullptr;
  std::optional<size_t> at = OffsetOf(content, map.mark);
  if (at && content[*at] == '{') return nullptr;
  return &map.entries.front();
}

}  // namespace

namespace {

// The source bytes of scalar `node` at `offset`: the text itself when plain, or inside quotes
// when it needed no escapes. 0 when it is written otherwise (escapes, a block scalar).
size_t WrittenLength(std::string_view content, size_t offset, const YamlNode& node) {
  const size_t n = node.text.size();
  if (node.plain) return content.substr(offset, n) == node.text ? n : 0;
  const char quote = content[offset];
  if ((quote != '"' && quote != '\'') || offset + n + 1 >= content.size()) return 0;
  if (content.substr(offset + 1, n) != node.text || content[offset + n + 1] != quote) return 0;
  return n + 2;
}

absl::Status ByHand(std::string_view written, std::string_view field, std::string_view value) {
  return absl::InvalidArgumentError(fmt::format(
      "{} is written in a form this edit does not handle: set {}: {} by hand", written, field,
      value));
}

// The keys of `path` from `from` on, nested under one another, the first at `indent`.
std::string NestedLines(const std::vector<std::string_view>& path, size_t from,
                        std::string_view value, const std::string& indent) {
  std::string lines;
  std::string pad = indent;
  for (size_t i = from; i < path.size(); ++i) {
    lines += fmt::format("{}{}:{}", pad, path[i], i + 1 == path.size() ? " " : "\n");
    pad += "  ";
  }
  return lines + std::string(value) + "\n";
}

}  // namespace

absl::StatusOr<std::string> SetProfileScalar(std::string_view content,
                                             const std::vector<std::string_view>& path,
                                             std::string_view value) {
  ParsedYaml parsed = ParseStrictYaml("profile", content);
  if (!parsed.root || path.empty()) return absl::InvalidArgumentError("the profile does not parse");
  const std::string field = fmt::format("{}", fmt::join(path, "."));
  const YamlNode* parent = &*parsed.root;
  size_t depth = 0;  // keys of `path` found
  while (depth < path.size()) {
    const YamlNode* next = parent->Find(path[depth]);
    if (next == nullptr) break;
    if (depth + 1 == path.size()) {
      std::optional<size_t> offset = OffsetOf(content, next->mark);
      const size_t length = next->IsScalar() && offset ? WrittenLength(content, *offset, *next) : 0;
      if (length == 0) return ByHand(field, field, value);
      return std::string(content).replace(*offset, length, value);
    }
    parent = next;
    ++depth;
  }
  const YamlEntry* first = FirstBlockEntry(content, *parent);
  if (first == nullptr) {
    return ByHand(depth == 0 ? "the profile"
                             : fmt::format("{}", fmt::join(path.begin(), path.begin() + depth, ".")),
                  field, value);
  }
  std::optional<size_t> at = LineStart(content, first->key_mark);
  if (!at) return absl::InvalidArgumentError("the profile has no position to add to");
  const std::string indent(static_cast<size_t>(first->key_mark.column - 1), ' ');
  return std::string(content).insert(*at, NestedLines(path, depth, value, indent));
}

absl::StatusOr<std::string> SetProfilePaused(std::string_view content, bool paused) {
  return SetProfileScalar(content, {"spec", "policy", "paused"}, paused ? "true" : "false");
}

absl::StatusOr<std::string> SetProfileRetry(std::string_view content, std::string_view token) {
  return SetProfileScalar(content, {"metadata", "annotations", kRetryAnnotation},
                          fmt::format("\"{}\"", token));
}

absl::StatusOr<std::string> SetProfileVersions(std::string_view content,
                                               const std::optional<Version>& talos,
                                               const std::optional<Version>& kubernetes) {
  ParsedYaml parsed = ParseStrictYaml("profile", content);
  if (!parsed.root) return absl::InvalidArgumentError("the profile does not parse");
  std::vector<Edit> edits;
  for (const auto& [section, version] :
       {std::pair{"talos", &talos}, std::pair{"kubernetes", &kubernetes}}) {
    if (!*version) continue;
    absl::StatusOr<Edit> edit = VersionEdit(content, &*parsed.root, section, **version);
    if (!edit.ok()) return edit.status();
    edits.push_back(*std::move(edit));
  }
  std::string out(content);
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.offset > b.offset; });
  for (const Edit& e : edits) out.replace(e.offset, e.length, e.text);
  return out;
}

}  // namespace tr::core
