#include "core/profile_edit.h"

#include <algorithm>
#include <vector>

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

absl::StatusOr<std::string> SetProfilePaused(std::string_view content, bool paused) {
  ParsedYaml parsed = ParseStrictYaml("profile", content);
  if (!parsed.root) return absl::InvalidArgumentError("the profile does not parse");
  const std::string value = paused ? "true" : "false";
  const YamlNode* spec = parsed.root->Find("spec");
  const YamlNode* policy = spec ? spec->Find("policy") : nullptr;
  const YamlNode* node = policy ? policy->Find("paused") : nullptr;
  std::string out(content);
  if (node != nullptr && node->IsScalar() && node->plain) {
    std::optional<size_t> offset = OffsetOf(content, node->mark);
    if (!offset || content.substr(*offset, node->text.size()) != node->text) {
      return absl::InvalidArgumentError("spec.policy.paused is written in a form this edit does "
                                        "not handle");
    }
    return out.replace(*offset, node->text.size(), value);
  }
  const YamlNode* parent = policy != nullptr ? policy : spec;
  const YamlEntry* first = parent ? FirstBlockEntry(content, *parent) : nullptr;
  if (first == nullptr || node != nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("{} is written in a form this edit does not handle: set "
                    "spec.policy.paused: {} by hand",
                    policy != nullptr ? "spec.policy" : "spec", value));
  }
  const std::string indent(static_cast<size_t>(first->key_mark.column - 1), ' ');
  const std::string added =
      policy != nullptr ? fmt::format("{}paused: {}\n", indent, value)
                        : fmt::format("{0}policy:\n{0}  paused: {1}\n", indent, value);
  std::optional<size_t> at = LineStart(content, first->key_mark);
  if (!at) return absl::InvalidArgumentError("the profile has no position to add to");
  return out.insert(*at, added);
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
