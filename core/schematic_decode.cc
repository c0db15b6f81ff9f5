#include "core/schematic_decode.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "core/names.h"
#include "core/schematic_yaml_scalar.h"
#include "core/text.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// [a-z0-9], then `inner` characters, ending with [a-z0-9].
bool IsLowerWord(std::string_view s, std::string_view inner) {
  if (s.empty() || s.size() > 128 || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [inner](char c) {
    return IsLowerAlnum(c) || inner.find(c) != std::string_view::npos;
  });
}

// Official extensions are named vendor/name: "siderolabs/iscsi-tools".
absl::Status CheckExtensionName(std::string_view name) {
  const size_t slash = name.find('/');
  if (slash != std::string_view::npos && IsLowerWord(name.substr(0, slash), "-") &&
      IsLowerWord(name.substr(slash + 1), "-._")) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      "must be an official extension as vendor/name, lowercase letters, digits and '-' "
      "(e.g. siderolabs/iscsi-tools)");
}

// Overlay images are named as the factory lists them: "siderolabs/sbc-raspberrypi".
absl::Status CheckOverlayImage(std::string_view image) {
  const std::vector<std::string_view> parts = Split(image, '/');
  if (image.size() <= 255 && std::all_of(parts.begin(), parts.end(), [](std::string_view part) {
        return IsLowerWord(part, "-._");
      })) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      "must be an overlay image as the factory names it, lowercase path parts joined by '/' "
      "(e.g. siderolabs/sbc-raspberrypi)");
}

absl::Status CheckOverlayName(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= 128 &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z') || c == '_' || c == '-' ||
                           c == '.';
                  });
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "must be an overlay name: letters, digits, '_', '-' or '.' (e.g. rpi_generic)");
}

// The platforms the factory builds installers for (talos pkg/machinery/platforms).
constexpr std::string_view kPlatforms[] = {
    "metal",     "aws",        "gcp",    "equinixMetal", "azure",   "digital-ocean",
    "nocloud",   "openstack",  "vmware", "akamai",       "cloudstack", "hcloud",
    "oracle",    "upcloud",    "vultr",  "exoscale",     "opennebula", "scaleway"};

absl::Status CheckPlatform(std::string_view platform) {
  if (std::find(std::begin(kPlatforms), std::end(kPlatforms), platform) != std::end(kPlatforms)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(fmt::format(
      "must be an Image Factory platform: {}",
      ListChoices(std::vector<std::string_view>(std::begin(kPlatforms), std::end(kPlatforms)))));
}

// A list of checked, unique strings; nullopt when any item is bad.
std::optional<std::vector<std::string>> ReadUniqueStrings(
    const Field& field, absl::Status (*check)(std::string_view)) {
  std::vector<std::string> out;
  std::map<std::string, std::string> seen;
  bool ok = true;
  for (const Field& item : ReadList(field)) {
    std::optional<std::string> text = ReadChecked(item, check);
    if (!text) {
      ok = false;
    } else if (auto [it, inserted] = seen.emplace(*text, item.path); !inserted) {
      item.Error(fmt::format("\"{}\" is already listed at {}", *text, it->second));
      ok = false;
    } else {
      out.push_back(*std::move(text));
    }
  }
  if (field.present() && !field.node->IsSequence()) ok = false;
  if (!ok) return std::nullopt;
  return out;
}

absl::Status CheckKernelArg(std::string_view arg) {
  if (arg.empty()) return absl::InvalidArgumentError("must not be empty");
  if (arg.find_first_of(" \t\r\n") != std::string_view::npos) {
    return absl::InvalidArgumentError("must be one kernel argument, without whitespace");
  }
  return absl::OkStatus();
}

// A META key, 0..255, in decimal or hex (0xa) as the factory reads it.
std::optional<int> ReadMetaKey(const Field& field) {
  if (!field.present()) return std::nullopt;
  const YamlNode& node = *field.node;
  std::string_view text = node.IsScalar() ? std::string_view(node.text) : std::string_view();
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    base = 16;
  }
  int value = -1;
  const bool digits =
      node.plain && !text.empty() && text.size() <= 3 && (base == 16 || text == "0" || text[0] != '0');
  if (digits) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (ec != std::errc() || ptr != text.data() + text.size()) value = -1;
  }
  if (value < 0 || value > 255) {
    field.Error("must be a META key from 0 to 255 (0xff), without quotes");
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<SchematicMeta>> DecodeMeta(const Field& field) {
  std::vector<SchematicMeta> out;
  std::map<int, std::string> seen;
  bool ok = !field.present() || field.node->IsSequence();
  for (const Field& item : ReadList(field)) {
    MappingReader m(item, {"key", "value"});
    const Field key_field = m.Required("key");
    std::optional<int> key = ReadMetaKey(key_field);
    std::optional<std::string> value = ReadString(m.Required("value"));
    if (!m.ok() || !key || !value) {
      ok = false;
    } else if (auto [it, inserted] = seen.emplace(*key, item.path); !inserted) {
      key_field.Error(fmt::format("META key {} is already set at {}", *key, it->second));
      ok = false;
    } else {
      out.push_back({.key = *key, .value = *std::move(value)});
    }
  }
  if (!ok) return std::nullopt;
  std::sort(out.begin(), out.end(),
            [](const SchematicMeta& a, const SchematicMeta& b) { return a.key < b.key; });
  return out;
}

// Overlay options are free-form; they are written back in canonical block YAML, keys sorted.
std::string OverlayOptionsYaml(const YamlNode& node, const std::string& indent);

std::string OptionScalar(const YamlNode& node) {
  if (node.kind == YamlNode::Kind::kNull) return "null";
  // A plain number, boolean or null stays plain, so it keeps its type; text is a string.
  if (node.plain && !IsPlainSafeString(node.text) &&
      node.text.find_first_of(" \t#:,[]{}\"'") == std::string::npos && !node.text.empty()) {
    return node.text;
  }
  return SchematicYamlScalar(node.text);
}

bool IsCollection(const YamlNode& node) {
  return (node.IsMapping() && !node.entries.empty()) || (node.IsSequence() && !node.items.empty());
}

std::string InlineValue(const YamlNode& node) {
  if (node.IsMapping()) return "{}";
  if (node.IsSequence()) return "[]";
  return OptionScalar(node);
}

// A list item: "- " then the item's first line; the rest indented under it.
std::string SequenceItem(const YamlNode& item, const std::string& indent) {
  if (!IsCollection(item)) return fmt::format("{}- {}\n", indent, InlineValue(item));
  std::string nested = OverlayOptionsYaml(item, indent + "  ");
  return indent + "- " + nested.substr(indent.size() + 2);
}

std::string OverlayOptionsYaml(const YamlNode& node, const std::string& indent) {
  std::string out;
  if (node.IsSequence()) {
    for (const YamlNode& item : node.items) out += SequenceItem(item, indent);
    return out;
  }
  std::vector<const YamlEntry*> entries;
  for (const YamlEntry& entry : node.entries) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(),
            [](const YamlEntry* a, const YamlEntry* b) { return a->key < b->key; });
  for (const YamlEntry* entry : entries) {
    const std::string key = SchematicYamlScalar(entry->key);
    if (!IsCollection(entry->value)) {
      out += fmt::format("{}{}: {}\n", indent, key, InlineValue(entry->value));
    } else {
      out += fmt::format("{}{}:\n", indent, key);
      out += OverlayOptionsYaml(entry->value, indent + "    ");
    }
  }
  return out;
}

std::optional<SchematicOverlay> DecodeOverlay(const Field& field) {
  MappingReader m(field, {"image", "name", "options"});
  if (!m.ok()) return std::nullopt;
  std::optional<std::string> image = ReadChecked(m.Required("image"), CheckOverlayImage);
  std::optional<std::string> name = ReadChecked(m.Required("name"), CheckOverlayName);
  const Field options = m.Optional("options");
  bool ok = image && name;
  if (options.present() && !options.node->IsMapping()) {
    options.Error(fmt::format("must be a mapping, not {}", DescribeKind(*options.node)));
    ok = false;
  }
  if (!ok) return std::nullopt;
  std::string options_yaml;
  if (options.present() && !options.node->entries.empty()) {
    options_yaml = OverlayOptionsYaml(*options.node, "");
    options_yaml.pop_back();  // the last newline: SchematicYaml ends every line itself
  }
  return SchematicOverlay{.image = *image, .name = *name, .options_yaml = options_yaml};
}

// `customization` and `overlay`: the body of an inline schematic and of a schematic file.
std::optional<Schematic> DecodeSchematicBody(const Field& field) {
  const size_t errors_before = field.ctx->error_count();
  MappingReader top(field, {"customization", "overlay"});
  if (!top.ok()) return std::nullopt;
  MappingReader c(top.Optional("customization"),
                  {"systemExtensions", "extraKernelArgs", "meta"});
  MappingReader extensions(c.Optional("systemExtensions"), {"officialExtensions"});
  const Field official = extensions.Optional("officialExtensions");
  auto official_extensions = ReadUniqueStrings(official, CheckExtensionName);
  auto kernel_args = ReadUniqueStrings(c.Optional("extraKernelArgs"), CheckKernelArg);
  auto meta = DecodeMeta(c.Optional("meta"));
  std::optional<SchematicOverlay> overlay;
  const Field overlay_field = top.Optional("overlay");
  if (overlay_field.present()) overlay = DecodeOverlay(overlay_field);
  if (field.ctx->error_count() > errors_before || !official_extensions || !kernel_args || !meta ||
      (overlay_field.present() && !overlay)) {
    return std::nullopt;
  }
  std::sort(official_extensions->begin(), official_extensions->end());
  return Schematic{.official_extensions = *std::move(official_extensions),
                   .extra_kernel_args = *std::move(kernel_args),
                   .meta = *std::move(meta),
                   .overlay = std::move(overlay),
                   .file = ""};
}

absl::Status CheckSchematicReference(std::string_view path) {
  if (IsSchematicFilePath(path)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "must be schematics/<name>.yaml: a file directly in schematics/, named with letters, "
      "digits, '.', '_' or '-' (no \"..\", not starting with '.')");
}

std::optional<Schematic> ResolveSchematicFile(const Field& field, SchematicLookup& lookup) {
  std::optional<std::string> path = ReadChecked(field, CheckSchematicReference);
  if (!path) return std::nullopt;
  const SourceFile* file = nullptr;
  if (lookup.files != nullptr) {
    if (auto it = lookup.files->find(*path); it != lookup.files->end()) file = it->second;
  }
  if (file == nullptr) {
    field.Error(fmt::format("{} does not exist in the repository", *path));
    return std::nullopt;
  }
  if (file->oversized) {
    field.Error(fmt::format("{} is larger than 1 MiB", *path));
    return std::nullopt;
  }
  Decoded<Schematic> decoded = DecodeSchematicFile(file->path, file->content);
  if (decoded.ok()) return *std::move(decoded.value);
  field.Error(fmt::format("{} is invalid; its errors are listed under its name", *path));
  if (lookup.reported.insert(*path).second) {
    lookup.file_diagnostics.insert(lookup.file_diagnostics.end(), decoded.diagnostics.begin(),
                                   decoded.diagnostics.end());
  }
  return std::nullopt;
}

}  // namespace

SchematicFiles CollectSchematicFiles(const std::vector<SourceFile>& files) {
  SchematicFiles out;
  for (const SourceFile& file : files) {
    if (IsSchematicFilePath(file.path)) out.emplace(file.path, &file);
  }
  return out;
}

bool IsSchematicFilePath(std::string_view path) {
  if (!path.starts_with(kSchematicsDir)) return false;
  const std::string_view name = path.substr(kSchematicsDir.size());
  if (name.size() <= 5 || !name.ends_with(".yaml") || name.front() == '.' ||
      name.find("..") != std::string_view::npos || name.size() > 255) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z') || c == '.' || c == '_' || c == '-';
  });
}

Decoded<Schematic> DecodeSchematicFile(std::string_view path, std::string_view content) {
  return DecodeYamlDocument<Schematic>(path, content, [&](const Field& root) {
    Schematic schematic = DecodeSchematicBody(root).value_or(Schematic{});
    schematic.file = std::string(path);
    return schematic;
  });
}

std::optional<Schematic> DecodeSchematicField(const Field& field, SchematicLookup& lookup) {
  if (!field.present()) return std::nullopt;
  if (!field.node->IsMapping() || field.node->Find("file") == nullptr) {
    return DecodeSchematicBody(field);
  }
  bool ok = true;
  for (const FieldEntry& entry : ReadMapEntries(field)) {
    if (entry.key == "file") continue;
    entry.KeyError(
        "a schematic is written inline or as {file: schematics/<name>.yaml}, not both");
    ok = false;
  }
  if (!ok) return std::nullopt;
  return ResolveSchematicFile(Field{.ctx = field.ctx,
                                    .node = field.node->Find("file"),
                                    .path = JoinPath(field.path, "file"),
                                    .mark = field.node->mark},
                              lookup);
}

void DecodeTalosInstaller(const Field& talos, const MappingReader& reader,
                          SchematicLookup& lookup, ClusterProfile& profile) {
  if (!reader.ok()) return;
  const Field image = reader.Optional("image");
  const Field schematic = reader.Optional("schematic");
  if (image.present() && schematic.present()) {
    schematic.Error("image and schematic exclude each other: keep one");
  } else if (!image.present() && !schematic.present()) {
    talos.Error("must set image (an installer repository) or schematic (Image Factory)");
  }
  if (!schematic.present() || image.present()) {
    profile.talos_image = ReadChecked(image, CheckImageRepository).value_or("");
    for (std::string_view key : {"factory", "platform", "secureboot"}) {
      const Field f = reader.Optional(key);
      if (f.present() && !schematic.present()) f.Error("is set only with schematic");
    }
    return;
  }
  const size_t errors_before = talos.ctx->error_count();
  const Field factory = reader.Optional("factory");
  const Field platform = reader.Optional("platform");
  const Field secureboot = reader.Optional("secureboot");
  std::optional<Schematic> decoded = DecodeSchematicField(schematic, lookup);
  FactoryInstaller installer;
  installer.factory = ReadChecked(factory, CheckImageFactoryUrl).value_or("");
  installer.platform = ReadChecked(platform, CheckPlatform).value_or("metal");
  installer.secureboot = ReadBool(secureboot).value_or(false);
  if (!decoded || talos.ctx->error_count() > errors_before) return;
  installer.schematic = *std::move(decoded);
  profile.talos_factory = std::move(installer);
}

}  // namespace tr::core
