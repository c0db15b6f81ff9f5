#include "reconciler/clients/forge/forge_requests.h"

#include "absl/strings/str_cat.h"

namespace tr::reconciler::forge {

using nlohmann::json;

const char* CommitStateName(CommitState state) {
  switch (state) {
    case CommitState::kPending:
      return "pending";
    case CommitState::kSuccess:
      return "success";
    case CommitState::kFailure:
      return "failure";
    case CommitState::kError:
      return "error";
  }
  return "error";
}

absl::StatusOr<json> ParseAnswer(std::string_view text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return absl::InvalidArgumentError("forge answer is not JSON");
  return value;
}

namespace {

// The node at `path` of `doc` and its dotted name; nullptr when a step is missing.
const json* NodeAt(const json& doc, std::initializer_list<const char*> path, std::string& name) {
  const json* node = &doc;
  for (const char* key : path) {
    name += name.empty() ? key : std::string(".") + key;
    if (node == nullptr || !node->is_object() || !node->contains(key)) {
      node = nullptr;
      continue;
    }
    node = &(*node)[key];
  }
  return node;
}

}  // namespace

absl::StatusOr<std::string> AnswerString(const json& doc, std::initializer_list<const char*> path,
                                         bool nullable, const char* what) {
  std::string name;
  const json* node = NodeAt(doc, path, name);
  if (node != nullptr && nullable && node->is_null()) return std::string();
  if (node == nullptr || !node->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "forge ", what, ": field ", name, node == nullptr ? " is missing" : " is not a string"));
  }
  return node->get<std::string>();
}

absl::StatusOr<int64_t> AnswerInteger(const json& doc, std::initializer_list<const char*> path,
                                      const char* what) {
  std::string name;
  const json* node = NodeAt(doc, path, name);
  if (node == nullptr || !node->is_number_integer()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "forge ", what, ": field ", name, node == nullptr ? " is missing" : " is not an integer"));
  }
  return node->get<int64_t>();
}

std::string CutUtf8(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

absl::StatusOr<std::vector<ForgeComment>> ParseComments(std::string_view text) {
  absl::StatusOr<json> value = ParseAnswer(text);
  if (!value.ok()) return value.status();
  if (!value->is_array()) return absl::InvalidArgumentError("forge comments: not a list");
  std::vector<ForgeComment> comments;
  for (const json& item : *value) {
    if (!item.is_object() || !item.contains("id") || !item["id"].is_number_integer() ||
        !item.contains("body") || !item["body"].is_string()) {
      return absl::InvalidArgumentError("forge comments: an entry lacks id or body");
    }
    comments.push_back({item["id"].get<int64_t>(), item["body"].get<std::string>()});
  }
  return comments;
}

absl::StatusOr<int64_t> ParseCreatedId(std::string_view text) {
  absl::StatusOr<json> value = ParseAnswer(text);
  if (!value.ok()) return value.status();
  if (!value->is_object() || !value->contains("id") || !(*value)["id"].is_number_integer()) {
    return absl::InvalidArgumentError("forge answer has no comment id");
  }
  return (*value)["id"].get<int64_t>();
}

}  // namespace tr::reconciler::forge
