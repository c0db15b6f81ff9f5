#include "core/yaml_decode.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <tuple>

#include "core/duration.h"
#include "core/names.h"
#include "core/text.h"
#include "core/yaml_text.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

// Messages and paths quote the file; keep a hostile file's megabyte out of them.
constexpr size_t kMaxMessageBytes = 400;

bool IsPlainNull(const YamlNode& node) {
  return node.kind == YamlNode::Kind::kNull ||
         (node.plain && (node.text.empty() || node.text == "~" || node.text == "null" ||
                         node.text == "Null" || node.text == "NULL"));
}

// YAML 1.1 read these as booleans; a plain one in a string field is almost always a mistake.
bool IsPlainBoolean(const YamlNode& node) {
  static constexpr std::string_view kWords[] = {"true", "false", "yes", "no", "on", "off"};
  if (!node.plain) return false;
  std::string lower = node.text;
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return std::find(std::begin(kWords), std::end(kWords), lower) != std::end(kWords);
}

// A scalar's text, or nullopt after reporting what the node is instead.
const YamlNode* Scalar(const Field& field, std::string_view want) {
  if (!field.present()) return nullptr;
  if (IsPlainNull(*field.node)) {
    field.Error(fmt::format("must be {}, not empty", want));
    return nullptr;
  }
  if (!field.node->IsScalar()) {
    field.Error(fmt::format("must be {}, not {}", want, DescribeKind(*field.node)));
    return nullptr;
  }
  return field.node;
}

std::string UnknownKeyMessage(std::string_view key, const std::vector<std::string_view>& known) {
  const std::string best = ClosestSpelling(key, known);
  if (best.empty()) return fmt::format("unknown key \"{}\"", key);
  return fmt::format("unknown key \"{}\" (did you mean \"{}\"?)", key, best);
}

Field Child(const Field& parent, const YamlNode* node, std::string path) {
  return Field{.ctx = parent.ctx,
               .node = node,
               .path = std::move(path),
               .mark = parent.node != nullptr ? parent.node->mark : parent.mark};
}

}  // namespace

void DecodeContext::Error(YamlMark mark, std::string path, std::string message) {
  ++errors_;
  if (diagnostics_.size() > kMaxDiagnosticsPerFile) return;
  if (diagnostics_.size() == kMaxDiagnosticsPerFile) {
    path.clear();
    message = "too many errors; not reporting the rest";
  }
  diagnostics_.push_back({.file = MessageSafe(file_, kMaxMessageBytes),
                          .line = mark.line,
                          .column = mark.column,
                          .path = MessageSafe(path, kMaxMessageBytes),
                          .message = MessageSafe(message, kMaxMessageBytes)});
}

Diagnostics DecodeContext::TakeDiagnostics() {
  const size_t sorted = std::min(diagnostics_.size(), kMaxDiagnosticsPerFile);
  std::stable_sort(diagnostics_.begin(), diagnostics_.begin() + static_cast<ptrdiff_t>(sorted),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::tie(a.line, a.column) < std::tie(b.line, b.column);
                   });
  return std::move(diagnostics_);
}

void Field::Error(std::string message) const {
  ctx->Error(node != nullptr ? node->mark : mark, path, std::move(message));
}

Field RootField(DecodeContext& ctx, const YamlNode& root) {
  return Field{.ctx = &ctx, .node = &root, .path = "", .mark = root.mark};
}

MappingReader::MappingReader(const Field& field, std::initializer_list<std::string_view> known)
    : MappingReader(field, std::vector<std::string_view>(known)) {}

MappingReader::MappingReader(const Field& field, const std::vector<std::string_view>& known)
    : field_(field) {
  if (!field.present()) return;
  if (!field.node->IsMapping()) {
    field.Error(fmt::format("must be a mapping, not {}", DescribeKind(*field.node)));
    return;
  }
  map_ = field.node;
  if (field.ctx->ignores_unknown_keys()) return;
  for (const YamlEntry& entry : map_->entries) {
    if (std::find(known.begin(), known.end(), entry.key) == known.end()) {
      field.ctx->Error(entry.key_mark, JoinPath(field.path, entry.key),
                       UnknownKeyMessage(entry.key, known));
    }
  }
}

Field MappingReader::Optional(std::string_view key) const {
  return Child(field_, map_ != nullptr ? map_->Find(key) : nullptr, JoinPath(field_.path, key));
}

Field MappingReader::Required(std::string_view key) const {
  Field child = Optional(key);
  if (map_ != nullptr && !child.present()) child.Error("is required");
  return child;
}

void CheckHeader(const MappingReader& top, std::string_view api_version, std::string_view kind) {
  const Field api = top.Required("apiVersion");
  if (std::optional<std::string> v = ReadString(api); v && *v != api_version) {
    api.Error(fmt::format("must be {}", api_version));
  }
  const Field k = top.Required("kind");
  if (std::optional<std::string> v = ReadString(k); v && *v != kind) {
    k.Error(fmt::format("must be {}", kind));
  }
}

void FieldEntry::KeyError(std::string message) const {
  value.ctx->Error(key_mark, value.path, std::move(message));
}

std::vector<FieldEntry> ReadMapEntries(const Field& field) {
  std::vector<FieldEntry> out;
  if (!field.present()) return out;
  if (!field.node->IsMapping()) {
    field.Error(fmt::format("must be a mapping, not {}", DescribeKind(*field.node)));
    return out;
  }
  for (const YamlEntry& entry : field.node->entries) {
    out.push_back(
        {entry.key, entry.key_mark, Child(field, &entry.value, JoinPath(field.path, entry.key))});
  }
  return out;
}

std::vector<Field> ReadList(const Field& field) {
  std::vector<Field> out;
  if (!field.present()) return out;
  if (!field.node->IsSequence()) {
    field.Error(fmt::format("must be a list, not {}", DescribeKind(*field.node)));
    return out;
  }
  for (size_t i = 0; i < field.node->items.size(); ++i) {
    out.push_back(Child(field, &field.node->items[i], JoinPath(field.path, i)));
  }
  return out;
}

std::optional<std::string> ReadString(const Field& field) {
  const YamlNode* node = Scalar(field, "a string");
  if (node == nullptr) return std::nullopt;
  if (IsPlainBoolean(*node)) {
    field.Error(
        fmt::format("must be a string; write \"{}\" in quotes if you mean the text", node->text));
    return std::nullopt;
  }
  return node->text;
}

std::optional<bool> ReadBool(const Field& field) {
  const YamlNode* node = Scalar(field, "true or false");
  if (node == nullptr) return std::nullopt;
  if (node->plain && node->text == "true") return true;
  if (node->plain && node->text == "false") return false;
  field.Error(node->plain ? "must be true or false" : "must be true or false, without quotes");
  return std::nullopt;
}

std::optional<int64_t> ReadInteger(const Field& field, int64_t min, int64_t max) {
  const YamlNode* node = Scalar(field, "a whole number");
  if (node == nullptr) return std::nullopt;
  std::string_view text = node->text;
  const bool negative = text.starts_with("-");
  std::string_view digits = negative ? text.substr(1) : text;
  if (!node->plain || !IsDigits(digits) || (digits.size() > 1 && digits[0] == '0')) {
    field.Error(node->plain ? "must be a whole number" : "must be a whole number, without quotes");
    return std::nullopt;
  }
  // Any length is read; what does not fit in 64 bits is beyond every bound asked for.
  int64_t value = 0;
  if (std::from_chars(digits.data(), digits.data() + digits.size(), value).ec != std::errc()) {
    field.Error(negative ? fmt::format("must be at least {}", min)
                         : fmt::format("must be at most {}", max));
    return std::nullopt;
  }
  if (negative) value = -value;
  if (value < min) field.Error(fmt::format("must be at least {}", min));
  if (value > max) field.Error(fmt::format("must be at most {}", max));
  if (value < min || value > max) return std::nullopt;
  return value;
}

std::optional<double> ReadNumber(const Field& field) {
  const YamlNode* node = Scalar(field, "a number");
  if (node == nullptr) return std::nullopt;
  const std::string& text = node->text;
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  const bool ok = node->plain && ec == std::errc() && ptr == end && std::isfinite(value) &&
                  text.find_first_of("nN") == std::string::npos;
  if (!ok) {
    field.Error(node->plain ? "must be a number" : "must be a number, without quotes");
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> ReadChecked(const Field& field,
                                       absl::Status (*check)(std::string_view)) {
  std::optional<std::string> text = ReadString(field);
  if (!text) return std::nullopt;
  if (absl::Status s = check(*text); !s.ok()) {
    field.Error(std::string(s.message()));
    return std::nullopt;
  }
  return text;
}

std::optional<std::chrono::seconds> ReadDuration(const Field& field, bool allow_zero) {
  const YamlNode* node = Scalar(field, "a duration such as 30s, 10m or 1h30m");
  if (node == nullptr) return std::nullopt;
  absl::StatusOr<std::chrono::seconds> d = ParseDuration(node->text);
  if (!d.ok()) {
    field.Error(std::string(d.status().message()));
    return std::nullopt;
  }
  if (!allow_zero && d->count() == 0) {
    field.Error("must be longer than zero");
    return std::nullopt;
  }
  return *d;
}

namespace {
template <typename T, typename Parse>
std::optional<T> ReadParsed(const Field& field, std::string_view want, Parse parse) {
  const YamlNode* node = Scalar(field, want);
  if (node == nullptr) return std::nullopt;
  absl::StatusOr<T> value = parse(node->text);
  if (!value.ok()) {
    field.Error(std::string(value.status().message()));
    return std::nullopt;
  }
  return *std::move(value);
}
}  // namespace

std::optional<Version> ReadTalosVersion(const Field& field) {
  return ReadParsed<Version>(field, "a Talos version such as 1.12.0", ParseTalosVersion);
}
std::optional<Version> ReadKubernetesVersion(const Field& field) {
  return ReadParsed<Version>(field, "a Kubernetes version such as 1.35.0", ParseKubernetesVersion);
}
std::optional<MinorVersion> ReadMinorVersion(const Field& field) {
  return ReadParsed<MinorVersion>(field, "a minor version such as 1.35", ParseMinorVersion);
}

std::map<std::string, std::string> ReadLabels(const Field& field) {
  std::map<std::string, std::string> labels;
  for (const FieldEntry& entry : ReadMapEntries(field)) {
    if (absl::Status s = CheckLabelKey(entry.key); !s.ok()) {
      entry.KeyError("label key " + std::string(s.message()));
    }
    std::optional<std::string> value = ReadString(entry.value);
    if (!value) continue;
    if (absl::Status s = CheckLabelValue(*value); !s.ok()) {
      entry.value.Error("label value " + std::string(s.message()));
    }
    labels.emplace(entry.key, *std::move(value));
  }
  return labels;
}

std::string ListChoices(const std::vector<std::string_view>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
    out += words[i];
  }
  return out;
}

}  // namespace tr::core
