#include "tests/sim/catalog/installer_config_check.h"

#include <sstream>
#include <string_view>

#include "fmt/format.h"

namespace tr::sim {
namespace {

struct KindSince {
  std::string_view kind;
  core::MinorVersion first;  // the first Talos minor whose config loader registers it
};

constexpr KindSince kKindsSince[] = {
    {"ImageVerificationConfig", {1, 13}}, {"KubeletConfig", {1, 14}},
    {"KubeAPIServerConfig", {1, 14}},     {"KubeControllerManagerConfig", {1, 14}},
    {"KubeSchedulerConfig", {1, 14}},     {"KubeProxyConfig", {1, 14}},
    {"KubeClusterConfig", {1, 14}},       {"UnattendedInstallConfig", {1, 14}},
};

bool Known(std::string_view kind, core::MinorVersion installer) {
  for (const KindSince& k : kKindsSince) {
    if (k.kind == kind) return installer >= k.first;
  }
  return true;
}

// "key: value" -> value, for the top-level keys the decoder reads (unquoted, as rendered).
std::string TopLevelValue(std::string_view line, std::string_view key) {
  if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != ':') return "";
  std::string_view v = line.substr(key.size() + 1);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  return std::string(v);
}

struct Document {
  int first_key_line = 0;
  std::string api_version, kind, name;
};

std::string Refusal(const Document& d) {
  return fmt::format(
      "error loading machine configuration: error decoding document {}/{}/{} (line {}): \"{}\" "
      "\"{}\": not registered",
      d.api_version, d.kind, d.name, d.first_key_line, d.kind, d.api_version);
}

}  // namespace

std::string InstallerConfigLoadError(const std::string& config, core::MinorVersion installer) {
  std::istringstream in(config);
  std::string line;
  Document doc;
  int n = 0;
  auto finish = [&]() -> std::string {
    if (!doc.kind.empty() && !Known(doc.kind, installer)) return Refusal(doc);
    doc = Document{};
    return "";
  };
  while (std::getline(in, line)) {
    ++n;
    if (line == "---") {
      if (std::string r = finish(); !r.empty()) return r;
      continue;
    }
    const bool key = !line.empty() && line.front() != ' ' && line.front() != '#';
    if (key && doc.first_key_line == 0) doc.first_key_line = n;
    if (std::string v = TopLevelValue(line, "apiVersion"); !v.empty()) doc.api_version = v;
    if (std::string v = TopLevelValue(line, "kind"); !v.empty()) doc.kind = v;
    if (std::string v = TopLevelValue(line, "name"); !v.empty()) doc.name = v;
  }
  return finish();
}

}  // namespace tr::sim
