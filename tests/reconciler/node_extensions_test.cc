// Reading a node's ExtensionStatuses: its schematic and its extensions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reconciler/clients/talos/extensions.h"

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

}  // namespace
}  // namespace tr::reconciler::talos
