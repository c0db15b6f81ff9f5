#include "core/schematic.h"

#include <algorithm>

#include "core/schematic_yaml_scalar.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

// The factory's serializer indents by four and indents list items under their key.
constexpr std::string_view kIndent = "    ";

void AppendList(std::string& out, std::string_view indent, std::string_view key,
                const std::vector<std::string>& items) {
  if (items.empty()) return;
  out += fmt::format("{}{}:\n", indent, key);
  for (const std::string& item : items) {
    out += fmt::format("{}{}- {}\n", indent, kIndent, SchematicYamlScalar(item));
  }
}

void AppendMeta(std::string& out, const std::vector<SchematicMeta>& meta) {
  if (meta.empty()) return;
  out += fmt::format("{}meta:\n", kIndent);
  for (const SchematicMeta& m : meta) {
    out += fmt::format("{0}{0}- key: {1}\n{0}{0}  value: {2}\n", kIndent, m.key,
                       SchematicYamlScalar(m.value));
  }
}

void AppendOverlay(std::string& out, const SchematicOverlay& overlay) {
  out += "overlay:\n";
  out += fmt::format("{}image: {}\n", kIndent, SchematicYamlScalar(overlay.image));
  out += fmt::format("{}name: {}\n", kIndent, SchematicYamlScalar(overlay.name));
  if (overlay.options_yaml.empty()) return;
  out += fmt::format("{}options:\n", kIndent);
  size_t start = 0;
  while (start < overlay.options_yaml.size()) {
    size_t end = overlay.options_yaml.find('\n', start);
    if (end == std::string::npos) end = overlay.options_yaml.size();
    out += fmt::format("{0}{0}{1}\n", kIndent,
                       std::string_view(overlay.options_yaml).substr(start, end - start));
    start = end + 1;
  }
}

std::string_view HostOf(std::string_view url) {
  for (std::string_view scheme : {"https://", "http://"}) {
    if (url.starts_with(scheme)) url.remove_prefix(scheme.size());
  }
  while (url.ends_with('/')) url.remove_suffix(1);
  return url;
}

}  // namespace

bool SameSchematic(const Schematic& a, const Schematic& b) {
  return a.official_extensions == b.official_extensions &&
         a.extra_kernel_args == b.extra_kernel_args && a.meta == b.meta && a.overlay == b.overlay;
}

std::string SchematicYaml(const Schematic& schematic) {
  std::string out;
  if (schematic.overlay) AppendOverlay(out, *schematic.overlay);
  std::string customization;
  AppendList(customization, kIndent, "extraKernelArgs", schematic.extra_kernel_args);
  AppendMeta(customization, schematic.meta);
  if (!schematic.official_extensions.empty()) {
    customization += fmt::format("{}systemExtensions:\n", kIndent);
    AppendList(customization, fmt::format("{0}{0}", kIndent), "officialExtensions",
               schematic.official_extensions);
  }
  out += customization.empty() ? "customization: {}\n" : "customization:\n" + customization;
  return out;
}

std::string FactoryInstallerRepository(std::string_view factory_url, std::string_view platform,
                                       bool secureboot, std::string_view schematic_id) {
  return fmt::format("{}/{}-installer{}/{}", HostOf(factory_url), platform,
                     secureboot ? "-secureboot" : "", schematic_id);
}

}  // namespace tr::core
