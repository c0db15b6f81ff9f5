// Schematic decoding and canonical marshalling (facts in schematic_id.h). The emitter follows
// go-yaml v3's choices for the values schematics hold: plain scalars where they read back as the
// same string, double quotes where a plain one would read as another type ("true", "10"),
// single quotes where it would not parse ("*x", "a: b"), literal blocks for multi-line text.
#include "tests/sim/catalog/schematic_id.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

constexpr int kIndent = 4;

bool ReadsAsOtherType(std::string_view s) {
  static const char* kWords[] = {"true", "false", "True", "False", "TRUE", "FALSE", "null",
                                 "Null", "NULL", "~",    "y",     "Y",    "yes",   "Yes",
                                 "YES",  "n",    "N",    "no",    "No",   "NO",    "on",
                                 "On",   "ON",   "off",  "Off",   "OFF",  ".inf",  ".nan"};
  for (const char* w : kWords) {
    if (s == w) return true;
  }
  std::string_view digits = s;
  if (digits.starts_with('-') || digits.starts_with('+')) digits.remove_prefix(1);
  if (digits.empty()) return false;
  return std::all_of(digits.begin(), digits.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

bool PlainAllowed(std::string_view s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ') return false;
  if (std::string_view("#,[]{}&*!|>'\"%@`").find(s.front()) != std::string_view::npos) return false;
  if ((s.front() == '-' || s.front() == '?' || s.front() == ':') &&
      (s.size() == 1 || s[1] == ' ')) {
    return false;
  }
  if (s.starts_with("---") || s.starts_with("...")) return false;
  return s.find(": ") == std::string_view::npos && s.find(" #") == std::string_view::npos &&
         !s.ends_with(':') && s.find('\t') == std::string_view::npos;
}

std::string Quoted(std::string_view s, char quote) {
  std::string out(1, quote);
  for (char c : s) {
    if (quote == '\'' && c == '\'') out += "''";
    else if (quote == '"' && (c == '"' || c == '\\')) out += std::string("\\") + c;
    else out += c;
  }
  return out + quote;
}

// `value` as it follows "key: " or "- " at `indent` (the column of the key or dash).
std::string Scalar(std::string_view s, int indent) {
  if (s.find('\n') != std::string_view::npos) {
    const bool ends = s.ends_with('\n');
    std::string out = ends ? "|" : "|-";
    std::string_view rest = ends ? s.substr(0, s.size() - 1) : s;
    const std::string pad(static_cast<size_t>(indent + kIndent), ' ');
    size_t start = 0;
    while (start <= rest.size()) {
      const size_t nl = std::min(rest.find('\n', start), rest.size());
      const std::string_view line = rest.substr(start, nl - start);
      out += "\n" + (line.empty() ? std::string() : pad + std::string(line));
      start = nl + 1;
    }
    return out;
  }
  if (s.empty() || ReadsAsOtherType(s)) return Quoted(s, '"');
  return PlainAllowed(s) ? std::string(s) : Quoted(s, '\'');
}

absl::Status Invalid(std::string_view what) {
  return absl::InvalidArgumentError(std::string(what));
}

// Canonical text of an overlay option value (Go decodes into map[string]any: keys sorted,
// scalars typed as they read; a quoted scalar stays a string).
void EmitAny(const YAML::Node& node, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (node.IsMap()) {
    std::map<std::string, YAML::Node> sorted;
    for (const auto& kv : node) sorted[kv.first.as<std::string>()] = kv.second;
    for (const auto& [key, value] : sorted) {
      if (value.IsScalar() || value.IsNull()) {
        out += pad + Scalar(key, indent) + ": ";
        EmitAny(value, indent, out);
      } else {
        out += pad + Scalar(key, indent) + ":\n";
        EmitAny(value, indent + kIndent, out);
      }
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) {
      out += pad + "- ";
      if (item.IsMap()) {
        std::string nested;
        EmitAny(item, indent + 2, nested);
        out += nested.substr(static_cast<size_t>(indent + 2));
      } else {
        EmitAny(item, indent + 2, out);
      }
    }
  } else if (node.IsNull()) {
    out += "null\n";
  } else {
    const std::string text = node.Scalar();
    out += (node.Tag() == "!" ? Scalar(text, indent) : text) + "\n";
  }
}

template <typename T>
absl::StatusOr<T> As(const YAML::Node& node, std::string_view key) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    return Invalid(fmt::format("cannot unmarshal {} into the schematic", key));
  }
}

absl::Status CheckKeys(const YAML::Node& node, std::string_view where,
                       std::initializer_list<std::string_view> known) {
  if (!node) return absl::OkStatus();  // absent
  if (!node.IsMap() && !node.IsNull()) return Invalid(fmt::format("{} must be a mapping", where));
  if (node.IsNull()) return absl::OkStatus();
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return Invalid(fmt::format("field {} not found in type {}", key, where));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> Strings(const YAML::Node& node, std::string_view key) {
  std::vector<std::string> out;
  if (!node || node.IsNull()) return out;
  if (!node.IsSequence()) return Invalid(fmt::format("{} must be a list", key));
  for (const auto& item : node) {
    auto s = As<std::string>(item, key);
    if (!s.ok()) return s.status();
    out.push_back(*s);
  }
  return out;
}

absl::Status ParseOverlay(const YAML::Node& y, Schematic& s) {
  if (auto st = CheckKeys(y, "schematic.Overlay", {"image", "name", "options"}); !st.ok()) return st;
  if (y["image"]) s.overlay_image = y["image"].as<std::string>("");
  if (y["name"]) s.overlay_name = y["name"].as<std::string>("");
  if (const YAML::Node options = y["options"]; options && options.IsMap() && options.size() > 0) {
    EmitAny(options, 2 * kIndent, s.overlay_options);
  } else if (options && !options.IsNull() && !options.IsMap()) {
    return Invalid("overlay.options must be a mapping");
  }
  return absl::OkStatus();
}

absl::Status ParseMeta(const YAML::Node& y, Schematic& s) {
  if (!y || y.IsNull()) return absl::OkStatus();
  if (!y.IsSequence()) return Invalid("meta must be a list");
  for (const auto& item : y) {
    if (auto st = CheckKeys(item, "schematic.MetaValue", {"key", "value"}); !st.ok()) return st;
    auto key = As<int>(item["key"], "meta key");
    if (!key.ok()) return key.status();
    if (*key < 0 || *key > 255) return Invalid("meta key must be 0..255 (uint8)");
    s.meta.push_back({*key, item["value"].as<std::string>("")});
  }
  return absl::OkStatus();
}

// customization.secureboot and customization.diskImage.
absl::Status ParseImageOptions(const YAML::Node& y, Schematic& s) {
  const YAML::Node sb = y["secureboot"];
  if (auto st = CheckKeys(sb, "schematic.SecureBootCustomization",
                          {"enrollKeys", "includeWellKnownCertificates"});
      !st.ok()) {
    return st;
  }
  if (sb && sb.IsMap()) {
    s.secureboot_enroll_keys = sb["enrollKeys"].as<std::string>("");
    auto wk = As<bool>(sb["includeWellKnownCertificates"] ? sb["includeWellKnownCertificates"]
                                                          : YAML::Node(false),
                       "includeWellKnownCertificates");
    if (!wk.ok()) return wk.status();
    s.include_well_known_certificates = *wk;
  }
  const YAML::Node disk = y["diskImage"];
  if (auto st = CheckKeys(disk, "schematic.DiskImageCustomization", {"sectorSize"}); !st.ok()) {
    return st;
  }
  if (disk && disk.IsMap() && disk["sectorSize"]) {
    auto size = As<unsigned>(disk["sectorSize"], "sectorSize");
    if (!size.ok()) return size.status();
    s.disk_image_sector_size = *size;
  }
  return absl::OkStatus();
}

absl::Status ParseCustomization(const YAML::Node& y, Schematic& s) {
  if (auto st = CheckKeys(y, "schematic.Customization",
                          {"embeddedMachineConfiguration", "extraKernelArgs", "meta",
                           "systemExtensions", "bootloader", "secureboot", "diskImage"});
      !st.ok()) {
    return st;
  }
  if (y.IsNull()) return absl::OkStatus();
  s.embedded_machine_configuration = y["embeddedMachineConfiguration"].as<std::string>("");
  auto args = Strings(y["extraKernelArgs"], "extraKernelArgs");
  if (!args.ok()) return args.status();
  s.extra_kernel_args = *args;
  if (auto st = ParseMeta(y["meta"], s); !st.ok()) return st;
  const YAML::Node ext = y["systemExtensions"];
  if (auto st = CheckKeys(ext, "schematic.SystemExtensions", {"officialExtensions"}); !st.ok()) {
    return st;
  }
  auto official = Strings(ext ? ext["officialExtensions"] : YAML::Node(), "officialExtensions");
  if (!official.ok()) return official.status();
  s.official_extensions = *official;
  s.bootloader = y["bootloader"].as<std::string>("");
  if (s.bootloader == "none") s.bootloader.clear();
  if (!s.bootloader.empty() && s.bootloader != "dual-boot" && s.bootloader != "sd-boot" &&
      s.bootloader != "grub") {
    return Invalid(fmt::format("{} does not belong to BootloaderKind values", s.bootloader));
  }
  return ParseImageOptions(y, s);
}

void EmitList(std::string_view key, const std::vector<std::string>& items, int indent,
              std::string& out) {
  if (items.empty()) return;
  const std::string pad(static_cast<size_t>(indent), ' ');
  out += pad + std::string(key) + ":\n";
  for (const auto& item : items) {
    out += pad + std::string(kIndent, ' ') + "- " + Scalar(item, indent + kIndent) + "\n";
  }
}

std::string CustomizationBody(const Schematic& s) {
  std::string out;
  const std::string pad(kIndent, ' ');
  if (!s.embedded_machine_configuration.empty()) {
    out += pad + "embeddedMachineConfiguration: " +
           Scalar(s.embedded_machine_configuration, kIndent) + "\n";
  }
  EmitList("extraKernelArgs", s.extra_kernel_args, kIndent, out);
  if (!s.meta.empty()) {
    out += pad + "meta:\n";
    for (const auto& m : s.meta) {
      out += fmt::format("{0}{0}- key: {1}\n{0}{0}  value: {2}\n", pad, m.key,
                         Scalar(m.value, 2 * kIndent + 2));
    }
  }
  if (!s.official_extensions.empty()) {
    out += pad + "systemExtensions:\n";
    EmitList("officialExtensions", s.official_extensions, 2 * kIndent, out);
  }
  if (!s.bootloader.empty()) out += pad + "bootloader: " + s.bootloader + "\n";
  if (!s.secureboot_enroll_keys.empty() || s.include_well_known_certificates) {
    out += pad + "secureboot:\n";
    if (!s.secureboot_enroll_keys.empty()) {
      out += pad + pad + "enrollKeys: " + Scalar(s.secureboot_enroll_keys, 2 * kIndent) + "\n";
    }
    if (s.include_well_known_certificates) out += pad + pad + "includeWellKnownCertificates: true\n";
  }
  if (s.disk_image_sector_size != 0) {
    out += fmt::format("{0}diskImage:\n{0}{0}sectorSize: {1}\n", pad, s.disk_image_sector_size);
  }
  return out;
}

absl::StatusOr<Schematic> Decode(const YAML::Node& root);

}  // namespace

absl::StatusOr<Schematic> ParseSchematic(std::string_view yaml) {
  // yaml-cpp's exceptions stop here (STYLE: converted in one adapter).
  try {
    return Decode(YAML::Load(std::string(yaml)));
  } catch (const YAML::Exception& e) {
    return Invalid(fmt::format("yaml: {}", e.what()));
  }
}

namespace {

absl::StatusOr<Schematic> Decode(const YAML::Node& root) {
  Schematic s;
  if (auto st = CheckKeys(root, "schematic.Schematic", {"owner", "overlay", "customization"});
      !st.ok()) {
    return st;
  }
  if (root.IsNull()) return s;
  s.owner = root["owner"].as<std::string>("");
  if (root["overlay"]) {
    if (auto st = ParseOverlay(root["overlay"], s); !st.ok()) return st;
  }
  if (root["customization"]) {
    if (auto st = ParseCustomization(root["customization"], s); !st.ok()) return st;
  }
  if (!s.owner.empty()) return Invalid("owner field is only supported in Enterprise edition");
  return s;
}

}  // namespace

std::string CanonicalSchematicYaml(const Schematic& s) {
  std::string out;
  const std::string pad(kIndent, ' ');
  if (!s.overlay_image.empty() || !s.overlay_name.empty() || !s.overlay_options.empty()) {
    out += "overlay:\n";
    out += pad + "image: " + Scalar(s.overlay_image, kIndent) + "\n";
    out += pad + "name: " + Scalar(s.overlay_name, kIndent) + "\n";
    if (!s.overlay_options.empty()) out += pad + "options:\n" + s.overlay_options;
  }
  const std::string body = CustomizationBody(s);
  out += body.empty() ? "customization: {}\n" : "customization:\n" + body;
  return out;
}

std::string SchematicId(const Schematic& schematic) {
  const std::string text = CanonicalSchematicYaml(schematic);
  unsigned char hash[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), hash);
  std::string hex;
  for (unsigned char b : hash) hex += fmt::format("{:02x}", b);
  return hex;
}

}  // namespace tr::sim
