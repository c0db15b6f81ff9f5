#include "core/schematic.h"

#include <openssl/sha.h>

#include <gtest/gtest.h>

#include "core/schematic_yaml_scalar.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

// The ID the Image Factory gives a schematic: the sha256 of its canonical YAML.
std::string Sha256Hex(std::string_view text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  std::string hex;
  for (unsigned char byte : digest) hex += fmt::format("{:02x}", byte);
  return hex;
}

TEST(SchematicYamlTest, TheEmptySchematicIsTheVanillaOne) {
  EXPECT_EQ(SchematicYaml(Schematic{}), "customization: {}\n");
  EXPECT_EQ(Sha256Hex(SchematicYaml(Schematic{})),
            "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba");
}

// The IDs of image-factory's pkg/schematic tests: the same bytes as the factory writes.
TEST(SchematicYamlTest, MatchesTheFactorysIdsForItsOwnExamples) {
  Schematic args;
  args.extra_kernel_args = {"noapic", "nolapic"};
  EXPECT_EQ(Sha256Hex(SchematicYaml(args)),
            "9cba8e32753f91a16c1837ab8abf356af021706ef284aef07380780177d9a06c");
  Schematic meta;
  meta.meta = {{.key = 0x0a, .value = "foo"}};
  EXPECT_EQ(Sha256Hex(SchematicYaml(meta)),
            "d308a2a5ee2277bed5fbaa104fcbc8d59122abfa737df987a95b4ca763459a7f");
  Schematic overlay;
  overlay.overlay = SchematicOverlay{.image = "siderolabs/sbc-raspberrypi", .name = "rpi_generic"};
  EXPECT_EQ(Sha256Hex(SchematicYaml(overlay)),
            "ee21ef4a5ef808a9b7484cc0dda0f25075021691c8c09a276591eedb638ea1f9");
}

// The well-known iSCSI schematic (docs/profiles.md's migration example).
TEST(SchematicYamlTest, ExtensionsGiveTheFactorysId) {
  Schematic s;
  s.official_extensions = {"siderolabs/iscsi-tools", "siderolabs/util-linux-tools"};
  EXPECT_EQ(Sha256Hex(SchematicYaml(s)),
            "613e1592b2da41ae5e265e8789429f22e121aab91cb4deb6bc3c0b6262961245");
}

TEST(SchematicYamlTest, WritesEverySectionInTheFactorysOrder) {
  Schematic s;
  s.official_extensions = {"siderolabs/iscsi-tools", "siderolabs/qemu-guest-agent"};
  s.extra_kernel_args = {"net.ifnames=0", "console=ttyS0,115200"};
  s.meta = {{.key = 10, .value = "a: b\nc: \"d\""}};
  s.overlay = SchematicOverlay{
      .image = "siderolabs/sbc-rockchip", .name = "turingrk1", .options_yaml = "a: 1\nb:\n    - x"};
  s.file = "schematics/edge.yaml";  // where it was written: not in the YAML
  EXPECT_EQ(SchematicYaml(s),
            "overlay:\n"
            "    image: siderolabs/sbc-rockchip\n"
            "    name: turingrk1\n"
            "    options:\n"
            "        a: 1\n"
            "        b:\n"
            "            - x\n"
            "customization:\n"
            "    extraKernelArgs:\n"
            "        - net.ifnames=0\n"
            "        - console=ttyS0,115200\n"
            "    meta:\n"
            "        - key: 10\n"
            "          value: \"a: b\\nc: \\\"d\\\"\"\n"
            "    systemExtensions:\n"
            "        officialExtensions:\n"
            "            - siderolabs/iscsi-tools\n"
            "            - siderolabs/qemu-guest-agent\n");
}

TEST(SchematicYamlTest, SameSchematicIgnoresWhereItWasWritten) {
  Schematic inline_one;
  inline_one.extra_kernel_args = {"quiet"};
  Schematic from_file = inline_one;
  from_file.file = "schematics/a.yaml";
  EXPECT_TRUE(SameSchematic(inline_one, from_file));
  EXPECT_FALSE(inline_one == from_file);
  from_file.extra_kernel_args.push_back("nomodeset");
  EXPECT_FALSE(SameSchematic(inline_one, from_file));
}

TEST(SchematicYamlScalarTest, QuotesWhatWouldNotReadBackAsTheSameString) {
  EXPECT_EQ(SchematicYamlScalar("siderolabs/iscsi-tools"), "siderolabs/iscsi-tools");
  EXPECT_EQ(SchematicYamlScalar("console=ttyS0,115200n8"), "console=ttyS0,115200n8");
  EXPECT_EQ(SchematicYamlScalar("10"), "\"10\"");
  EXPECT_EQ(SchematicYamlScalar("0x1f"), "\"0x1f\"");
  EXPECT_EQ(SchematicYamlScalar("1.5e3"), "\"1.5e3\"");
  EXPECT_EQ(SchematicYamlScalar("true"), "\"true\"");
  EXPECT_EQ(SchematicYamlScalar("Off"), "\"Off\"");
  EXPECT_EQ(SchematicYamlScalar("null"), "\"null\"");
  EXPECT_EQ(SchematicYamlScalar(""), "\"\"");
  EXPECT_EQ(SchematicYamlScalar("a b"), "\"a b\"");
  EXPECT_EQ(SchematicYamlScalar("key:"), "\"key:\"");
  EXPECT_EQ(SchematicYamlScalar("-x"), "\"-x\"");
  EXPECT_EQ(SchematicYamlScalar("a#b"), "\"a#b\"");
  EXPECT_EQ(SchematicYamlScalar("tab\there\x01"), "\"tab\\there\\x01\"");
  EXPECT_EQ(SchematicYamlScalar("back\\slash"), "\"back\\\\slash\"");
}

TEST(FactoryInstallerRepositoryTest, BuildsTheInstallerRepositoryOfEachForm) {
  const std::string id = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";
  EXPECT_EQ(FactoryInstallerRepository("https://factory.talos.dev", "metal", false, id),
            "factory.talos.dev/metal-installer/" + id);
  EXPECT_EQ(FactoryInstallerRepository("https://factory.talos.dev", "aws", true, id),
            "factory.talos.dev/aws-installer-secureboot/" + id);
  EXPECT_EQ(FactoryInstallerRepository("http://factory.lan:8080", "nocloud", false, "abc"),
            "factory.lan:8080/nocloud-installer/abc");
  EXPECT_EQ(FactoryInstallerRepository("https://10.0.0.5:5000/", "metal", true, "abc"),
            "10.0.0.5:5000/metal-installer-secureboot/abc");
}

}  // namespace
}  // namespace tr::core
