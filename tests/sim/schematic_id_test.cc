// Schematic IDs as the Image Factory computes them (expected IDs are the ones image-factory's own
// pkg/schematic tests pin).
#include "tests/sim/catalog/schematic_id.h"

#include <gtest/gtest.h>

#include "tests/sim/catalog/image_registry.h"

namespace tr::sim {
namespace {

struct IdCase {
  const char* name;
  const char* yaml;
  const char* id;
};

class SchematicIdTest : public ::testing::TestWithParam<IdCase> {};

TEST_P(SchematicIdTest, MatchesTheFactory) {
  auto schematic = ParseSchematic(GetParam().yaml);
  ASSERT_TRUE(schematic.ok()) << schematic.status();
  EXPECT_EQ(SchematicId(*schematic), GetParam().id) << CanonicalSchematicYaml(*schematic);
}

constexpr const char* kEmpty = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";
constexpr const char* kNoApic = "9cba8e32753f91a16c1837ab8abf356af021706ef284aef07380780177d9a06c";
constexpr const char* kMeta = "d308a2a5ee2277bed5fbaa104fcbc8d59122abfa737df987a95b4ca763459a7f";
constexpr const char* kRpi = "ee21ef4a5ef808a9b7484cc0dda0f25075021691c8c09a276591eedb638ea1f9";

INSTANTIATE_TEST_SUITE_P(
    Upstream, SchematicIdTest,
    ::testing::Values(
        IdCase{"empty_document", "", kEmpty}, IdCase{"empty_json", "{}", kEmpty},
        IdCase{"empty_customization", "customization: {}", kEmpty},
        IdCase{"empty_args", R"(customization: {"extraKernelArgs": []})", kEmpty},
        IdCase{"args_json", R"({"customization": {"extraKernelArgs": ["noapic", "nolapic"]}})",
               kNoApic},
        IdCase{"args_block", "customization:\n  extraKernelArgs:\n  - noapic\n  - nolapic\n",
               kNoApic},
        IdCase{"args_empty_extensions",
               R"({"customization": {"extraKernelArgs": ["noapic", "nolapic"], "systemExtensions": {}}})",
               kNoApic},
        IdCase{"meta",
               R"({"customization": {"meta": [{"key": 10, "value": "foo"}], "extraKernelArgs": []}})",
               kMeta},
        IdCase{"overlay", R"({"overlay": {"name": "rpi_generic", "image": "siderolabs/sbc-raspberrypi"}})",
               kRpi},
        IdCase{"secureboot", R"({"customization":{"secureboot": {"includeWellKnownCertificates": true}}})",
               "fa8e05f142a851d3ee568eb0a8e5841eaf6b0ebc8df9a63df16ac5ed2c04f3e6"},
        IdCase{"sector_size", "customization: {diskImage: {sectorSize: 4096}}",
               "92833e9ddd9bb9e11b2464fa5525429f01866306d52ebd882ee08d7918f6d1ea"}),
    [](const auto& test_case) { return std::string(test_case.param.name); });

TEST(SchematicId, EmptyIsTheVanillaSchematic) {
  auto schematic = ParseSchematic("customization: {}\n");
  ASSERT_TRUE(schematic.ok());
  EXPECT_EQ(SchematicId(*schematic), kVanillaSchematic);
}

TEST(SchematicId, SameSchematicDifferentlyWrittenHasOneId) {
  auto flow = ParseSchematic(
      R"({"customization": {"systemExtensions": {"officialExtensions": ["siderolabs/iscsi-tools",)"
      R"( "siderolabs/qemu-guest-agent"]}, "extraKernelArgs": ["console=ttyS0"]}})");
  auto block = ParseSchematic(R"(# a comment
customization:
        extraKernelArgs: [console=ttyS0]
        systemExtensions:
            officialExtensions:
              - siderolabs/iscsi-tools
              - "siderolabs/qemu-guest-agent"
)");
  ASSERT_TRUE(flow.ok() && block.ok());
  EXPECT_EQ(SchematicId(*flow), SchematicId(*block));
  EXPECT_NE(SchematicId(*flow), kVanillaSchematic);
  EXPECT_EQ(CanonicalSchematicYaml(*flow),
            "customization:\n    extraKernelArgs:\n        - console=ttyS0\n    systemExtensions:\n"
            "        officialExtensions:\n            - siderolabs/iscsi-tools\n"
            "            - siderolabs/qemu-guest-agent\n");
}

TEST(SchematicId, ExtensionOrderMatters) {
  // The factory hashes the list as written: another order is another schematic.
  auto ab = ParseSchematic("customization: {systemExtensions: {officialExtensions: [a/x, b/y]}}");
  auto ba = ParseSchematic("customization: {systemExtensions: {officialExtensions: [b/y, a/x]}}");
  ASSERT_TRUE(ab.ok() && ba.ok());
  EXPECT_NE(SchematicId(*ab), SchematicId(*ba));
}

TEST(SchematicId, QuotesWhatWouldReadAsAnotherType) {
  auto s = ParseSchematic(R"(customization: {extraKernelArgs: ["1", "true", "*x", "a=b"]})");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(CanonicalSchematicYaml(*s),
            "customization:\n    extraKernelArgs:\n        - \"1\"\n        - \"true\"\n"
            "        - '*x'\n        - a=b\n");
}

TEST(SchematicId, RefusesWhatTheFactoryRefuses) {
  for (const char* bad : {
           "customization: {extraKernelArg: [x]}",              // unknown key
           "customisation: {}",                                 // unknown top-level key
           "customization: {systemExtensions: {official: []}}",  // unknown nested key
           "customization: {meta: [{key: 300, value: x}]}",     // key is a uint8
           "customization: [",                                  // invalid YAML
           "owner: alice",                                      // enterprise only
           "customization: {bootloader: lilo}",
       }) {
    auto s = ParseSchematic(bad);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace tr::sim
