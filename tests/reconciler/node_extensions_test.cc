// Reading a node's ExtensionStatuses: its schematic and its extensions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reconciler/clients/talos/extensions.h"
#include "tests/sim/catalog/extension_resources.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kId[] = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";

CosiResource Extension(const std::string& id, const std::string& yaml) {
  CosiResource r;
  r.namespace_name = kRuntimeNamespace;
  r.type = kExtensionStatusType;
  r.id = id;
  r.yaml_spec = yaml;
  return r;
}

TEST(NodeExtensionsTest, TheSchematicExtensionGivesTheIdAndTheOthersAreListed) {
  const NodeExtensions read = ReadNodeExtensions({
      Extension("0",
                "image: 000-iscsi-tools.sqsh\nmetadata:\n  name: iscsi-tools\n"
                "  version: v0.2.0\n  author: Sidero Labs\n"),
      Extension("1", std::string("image: \"\"\nmetadata:\n  name: schematic\n  version: ") + kId +
                         "\n  description: \"\"\n"),
      Extension("2", "metadata: {name: qemu-guest-agent, version: 10.0.2}\n"),
  });
  EXPECT_EQ(read.schematic, kId);
  EXPECT_THAT(read.extensions, ElementsAre("iscsi-tools v0.2.0", "qemu-guest-agent 10.0.2"));
}

TEST(NodeExtensionsTest, AnImageWithoutASchematicHasNone) {
  const NodeExtensions read =
      ReadNodeExtensions({Extension("0", "metadata: {name: gvisor, version: 20250505.0}\n")});
  EXPECT_EQ(read.schematic, std::nullopt);
  EXPECT_THAT(read.extensions, ElementsAre("gvisor 20250505.0"));
}

TEST(NodeExtensionsTest, UntrustedSpecsThatAreNotExtensionsAreLeftOut) {
  const NodeExtensions read = ReadNodeExtensions({
      Extension("0", "metadata: {name: schematic, version: ../../etc}\n"),
      Extension("1", "{{{ not yaml"),
      Extension("2", "metadata: [a, b]\n"),
      Extension("3", "metadata: {name: {nested: 1}}\n"),
      Extension("4", ""),
  });
  EXPECT_EQ(read.schematic, std::nullopt);
  EXPECT_THAT(read.extensions, IsEmpty());
}

// What talos-sim serves for an image's layers (its own encoder, after upstream's
// extensions.Layer), with the YAML left out or replaced.
std::vector<CosiResource> Served(const std::vector<sim::InstalledExtension>& layers,
                                 const std::string& yaml) {
  std::vector<CosiResource> out;
  for (const sim::DesiredResource& d : sim::ExtensionResources(layers, 13)) {
    CosiResource r = Extension(d.id, yaml);
    r.proto_spec = d.proto;
    out.push_back(r);
  }
  return out;
}

TEST(NodeExtensionsTest, TheProtobufSpecIsReadWhenTheNodeSendsOne) {
  const std::vector<sim::InstalledExtension> layers = {
      {"0", "0.sqsh", "iscsi-tools", "v0.2.0", "Sidero Labs", "iSCSI"},
      {"1", "1.sqsh", "schematic", kId, "Image Factory (https://factory.example)", ""},
  };
  const NodeExtensions read = ReadNodeExtensions(Served(layers, ""));
  EXPECT_EQ(read.schematic, kId);
  EXPECT_THAT(read.extensions, ElementsAre("iscsi-tools v0.2.0"));
  // The protobuf decides: a YAML that says otherwise is not read.
  const NodeExtensions beside_other_yaml =
      ReadNodeExtensions(Served(layers, "metadata: {name: gvisor, version: 1}\n"));
  EXPECT_EQ(beside_other_yaml.schematic, kId);
  EXPECT_THAT(beside_other_yaml.extensions, ElementsAre("iscsi-tools v0.2.0"));
}

TEST(NodeExtensionsTest, UntrustedProtobufSpecsThatAreNotExtensionsAreLeftOut) {
  const auto proto = [](const std::string& bytes) {
    CosiResource r = Extension("0", "metadata: {name: gvisor, version: 1}\n");
    r.proto_spec = bytes;
    return r;
  };
  const NodeExtensions read = ReadNodeExtensions({
      proto(std::string("\x12\x05\x0a\x04"
                        "abc",
                        7)),                      // metadata's name cut short
      proto(std::string("\x12\x02\x12\x00", 4)),  // metadata without a name
      proto(std::string("\x0a\x01x", 3)),         // no metadata at all
      proto(std::string("\x13\x14", 2)),          // a group: no field of a Layer
      proto(std::string("\x02\x00", 2)),          // field number 0
      proto(std::string("\x12\x80", 2)),          // a length that never ends
  });
  EXPECT_EQ(read.schematic, std::nullopt);
  EXPECT_THAT(read.extensions, IsEmpty());
  // Fields a Layer does not know are skipped, whatever their wire type.
  const NodeExtensions skipped = ReadNodeExtensions({proto(
      std::string("\x18\x96\x01\x21", 4) + std::string(8, 'x') + "\x2d" + std::string(4, 'y') +
      std::string("\x12\x08\x0a\x03"
                  "abc\x12\x01\x31",
                  10))});
  EXPECT_THAT(skipped.extensions, ElementsAre("abc 1"));
}

}  // namespace
}  // namespace tr::reconciler::talos
