#include "tests/sim/catalog/extension_resources.h"

#include "fmt/format.h"

namespace tr::sim {
namespace {

// The repo's proto set has neither extensions.proto nor ImageFactorySchematicSpec, so the two
// specs are written in protobuf wire format by hand: length-delimited fields only.
void Varint(uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void Field(int number, const std::string& bytes, std::string& out) {
  if (bytes.empty()) return;  // proto3 omits empty strings and empty messages
  Varint(static_cast<uint64_t>(number) << 3 | 2, out);
  Varint(bytes.size(), out);
  out += bytes;
}

std::string LayerProto(const InstalledExtension& e) {
  std::string metadata;
  Field(1, e.name, metadata);
  Field(2, e.version, metadata);
  Field(3, e.author, metadata);
  Field(4, e.description, metadata);
  std::string layer;
  Field(1, e.image, layer);
  Field(2, metadata, layer);
  return layer;
}

// go-yaml's quoting is not needed: names, versions and URLs are plain; descriptions are
// double-quoted to stay valid whatever they hold.
std::string LayerYaml(const InstalledExtension& e) {
  return fmt::format(
      "image: {}\nmetadata:\n    name: {}\n    version: {}\n    author: \"{}\"\n"
      "    description: \"{}\"\n    compatibility:\n        talos:\n            version: \"\"\n",
      e.image, e.name, e.version, e.author, e.description);
}

// "Image Factory (https://factory.talos.dev)" -> {"Image Factory", "https://factory.talos.dev"}.
std::pair<std::string, std::string> ParseAuthor(const std::string& author) {
  const size_t open = author.rfind(" (");
  if (open == std::string::npos) return {author, ""};
  std::string url = author.substr(open + 2);
  if (url.ends_with(')')) url.pop_back();
  return {author.substr(0, open), url};
}

}  // namespace

std::vector<DesiredResource> ExtensionResources(const std::vector<InstalledExtension>& extensions,
                                                int talos_minor) {
  std::vector<DesiredResource> out;
  for (const auto& e : extensions) {
    out.push_back({"runtime", "ExtensionStatuses.runtime.talos.dev", e.id, LayerProto(e),
                   LayerYaml(e)});
  }
  if (talos_minor < 14) return out;
  for (const auto& e : extensions) {
    if (e.name != "schematic" || e.version.empty()) continue;
    const auto [flavor, url] = ParseAuthor(e.author);
    std::string proto;
    Field(1, e.version, proto);
    Field(2, flavor, proto);
    Field(3, url, proto);
    out.push_back({"runtime", "ImageFactorySchematics.runtime.talos.dev",
                   "image-factory-schematic", proto,
                   fmt::format("schematicId: {}\nflavor: {}\napiUrl: {}\n", e.version, flavor,
                               url)});
    break;
  }
  return out;
}

}  // namespace tr::sim
