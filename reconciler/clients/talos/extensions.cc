#include "reconciler/clients/talos/extensions.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "core/names.h"

namespace tr::reconciler::talos {
namespace {

struct Extension {
  std::string name, version;
};

// The node's answer is untrusted: anything but a mapping with scalar name and version is no
// extension.
std::optional<Extension> ExtensionOf(const std::string& yaml_spec) {
  try {
    const YAML::Node metadata = YAML::Load(yaml_spec)["metadata"];
    if (!metadata.IsMap() || !metadata["name"].IsScalar()) return std::nullopt;
    Extension e{metadata["name"].as<std::string>(), ""};
    if (metadata["version"].IsScalar()) e.version = metadata["version"].as<std::string>();
    if (e.name.empty()) return std::nullopt;
    return e;
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

}  // namespace

NodeExtensions ReadNodeExtensions(const std::vector<CosiResource>& resources) {
  NodeExtensions out;
  for (const CosiResource& resource : resources) {
    std::optional<Extension> e = ExtensionOf(resource.yaml_spec);
    if (!e) continue;
    if (e->name == "schematic") {
      if (core::CheckSchematicId(e->version).ok()) out.schematic = e->version;
      continue;
    }
    out.extensions.push_back(e->version.empty() ? e->name : e->name + " " + e->version);
  }
  std::sort(out.extensions.begin(), out.extensions.end());
  return out;
}

}  // namespace tr::reconciler::talos
