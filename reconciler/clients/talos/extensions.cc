#include "reconciler/clients/talos/extensions.h"

#include <google/protobuf/io/coded_stream.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

#include "core/names.h"

namespace tr::reconciler::talos {
namespace {

struct Extension {
  std::string name, version;
};

// The length-delimited fields of a message in protobuf wire format, by number (the last of
// each, as a parser keeps for a field that is not repeated); nullopt when `wire` is not a
// well-formed message. The repo's proto set has no extensions.proto: two fields are read by hand.
std::optional<std::map<uint32_t, std::string>> LengthDelimitedFields(const std::string& wire) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(wire.data()),
                                            static_cast<int>(wire.size()));
  std::map<uint32_t, std::string> fields;
  while (in.CurrentPosition() < static_cast<int>(wire.size())) {
    const uint32_t tag = in.ReadTag();
    uint32_t length = 0;
    uint64_t ignored = 0;
    bool read = false;
    switch (tag & 7) {
      case 0:
        read = in.ReadVarint64(&ignored);
        break;
      case 1:
        read = in.Skip(8);
        break;
      case 2:
        read = in.ReadVarint32(&length) && in.ReadString(&fields[tag >> 3], length);
        break;
      case 5:
        read = in.Skip(4);
        break;
      default:
        break;  // groups (3, 4) are not in these messages; 6 and 7 are no wire type
    }
    if (tag >> 3 == 0 || !read) return std::nullopt;
  }
  return fields;
}

// A spec in protobuf (`extensions.Layer`: 1 image, 2 metadata{1 name, 2 version, ...}), which
// COSI's server sends beside the YAML of every registered type (docs/talos-api.md §5), and
// which costs a fraction of yaml-cpp's parse.
std::optional<Extension> ExtensionOfProto(const std::string& proto_spec) {
  std::optional<std::map<uint32_t, std::string>> layer = LengthDelimitedFields(proto_spec);
  if (!layer) return std::nullopt;
  std::optional<std::map<uint32_t, std::string>> metadata = LengthDelimitedFields((*layer)[2]);
  if (!metadata || (*metadata)[1].empty()) return std::nullopt;
  return Extension{(*metadata)[1], (*metadata)[2]};
}

// The node's answer is untrusted: anything but a mapping with scalar name and version is no
// extension.
std::optional<Extension> ExtensionOfYaml(const std::string& yaml_spec) {
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
    // A spec without protobuf (an empty one, or a server that sends YAML only) is read from
    // its YAML.
    std::optional<Extension> e = resource.proto_spec.empty()
                                     ? ExtensionOfYaml(resource.yaml_spec)
                                     : ExtensionOfProto(resource.proto_spec);
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
