#include "core/schematic_decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile_decode.h"
#include "core/profile_set.h"
#include "core/repository_defaults_decode.h"
#include "fmt/format.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using testing::ElementsAre;
using testing::IsEmpty;

constexpr std::string_view kEdgePath = "clusters/edge.yaml";

// A profile whose spec.talos is `talos` (indented under "  talos:") and whose worker w-0
// carries `worker` after its role. Line 8 is "  talos:"; `talos` starts on line 9.
std::string SchematicProfile(std::string_view talos, std::string_view worker = "") {
  return fmt::format(R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: edge
spec:
  endpoints: [10.0.0.11]
  credentials: edge
  talos:
{}
  kubernetes:
    version: 1.35.0
  nodes:
    - {{name: cp-0, address: 10.0.0.11, role: controlplane}}
    - name: w-0
      address: 10.0.1.21
      role: worker
{})",
                     talos, worker);
}

Decoded<ClusterProfile> DecodeEdge(std::string_view text, const SchematicFiles& files = {}) {
  return DecodeClusterProfile(kEdgePath, text, PolicyOverrides{}, ValidationOptions{}, files);
}

std::vector<std::string> Errors(std::string_view text, const SchematicFiles& files = {}) {
  Decoded<ClusterProfile> decoded = DecodeEdge(text, files);
  EXPECT_FALSE(decoded.ok());
  return DiagnosticStrings(decoded.diagnostics);
}

SourceFile SchematicSource(std::string path, std::string content) {
  return SourceFile{.path = std::move(path), .content = std::move(content), .oversized = false};
}

TEST(SchematicDecodeTest, DecodesAnInlineSchematicWithItsDefaults) {
  Decoded<ClusterProfile> decoded = DecodeEdge(SchematicProfile(R"(    version: 1.12.0
    schematic:
      customization:
        systemExtensions:
          officialExtensions: [siderolabs/qemu-guest-agent, siderolabs/iscsi-tools]
        extraKernelArgs: [net.ifnames=0, "console=ttyS0,115200"]
        meta:
          - {key: 0xa, value: "machines: []"}
          - {key: 7, value: ""}
      overlay:
        image: siderolabs/sbc-raspberrypi
        name: rpi_generic
        options: {configTxtAppend: "dtoverlay=x", b: [1, "2", true], a: {}})"));
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  const ClusterProfile& p = *decoded.value;
  EXPECT_EQ(p.talos_image, "");
  EXPECT_EQ(p.InstallerImage(), "");
  ASSERT_TRUE(p.talos_factory.has_value());
  const FactoryInstaller& f = *p.talos_factory;
  EXPECT_EQ(f.factory, "");
  EXPECT_EQ(f.platform, "metal");
  EXPECT_FALSE(f.secureboot);
  EXPECT_THAT(f.schematic.official_extensions,
              ElementsAre("siderolabs/iscsi-tools", "siderolabs/qemu-guest-agent"));
  EXPECT_THAT(f.schematic.extra_kernel_args, ElementsAre("net.ifnames=0", "console=ttyS0,115200"));
  EXPECT_THAT(f.schematic.meta, ElementsAre(SchematicMeta{.key = 7, .value = ""},
                                            SchematicMeta{.key = 10, .value = "machines: []"}));
  ASSERT_TRUE(f.schematic.overlay.has_value());
  EXPECT_EQ(f.schematic.overlay->image, "siderolabs/sbc-raspberrypi");
  EXPECT_EQ(f.schematic.overlay->name, "rpi_generic");
  EXPECT_EQ(f.schematic.overlay->options_yaml,
            "a: {}\nb:\n    - 1\n    - \"2\"\n    - true\nconfigTxtAppend: dtoverlay=x");
  EXPECT_EQ(f.schematic.file, "");
  EXPECT_FALSE(p.nodes[1].schematic.has_value());
}

TEST(SchematicDecodeTest, ReadsFactoryPlatformAndSecureboot) {
  Decoded<ClusterProfile> decoded = DecodeEdge(SchematicProfile(R"(    version: 1.12.0
    schematic: {}
    factory: https://factory.example.com:8443
    platform: nocloud
    secureboot: true)"));
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  const FactoryInstaller& f = *decoded.value->talos_factory;
  EXPECT_EQ(f.factory, "https://factory.example.com:8443");
  EXPECT_EQ(f.platform, "nocloud");
  EXPECT_TRUE(f.secureboot);
  EXPECT_EQ(SchematicYaml(f.schematic), "customization: {}\n");
}

TEST(SchematicDecodeTest, DifferentlyWrittenEqualSchematicsHaveTheSameYaml) {
  Decoded<ClusterProfile> block = DecodeEdge(SchematicProfile(R"(    version: 1.12.0
    schematic:
      overlay:
        name: rpi_generic
        image: siderolabs/sbc-raspberrypi
        options:
          z: 1
          a: [x, y]
      customization:
        meta:
          - key: 10
            value: foo
          - key: 0x01
            value: bar
        systemExtensions:
          officialExtensions:
            - siderolabs/zfs
            - siderolabs/iscsi-tools)"));
  Decoded<ClusterProfile> flow = DecodeEdge(SchematicProfile(R"(    version: 1.12.0
    schematic: {customization: {systemExtensions: {officialExtensions: ["siderolabs/iscsi-tools", siderolabs/zfs]}, meta: [{value: bar, key: 1}, {key: 0xA, value: 'foo'}], extraKernelArgs: []}, overlay: {image: "siderolabs/sbc-raspberrypi", name: rpi_generic, options: {a: ["x", y], z: 1}}})"));
  ASSERT_TRUE(block.ok()) << testing::PrintToString(DiagnosticStrings(block.diagnostics));
  ASSERT_TRUE(flow.ok()) << testing::PrintToString(DiagnosticStrings(flow.diagnostics));
  const Schematic& a = block.value->talos_factory->schematic;
  const Schematic& b = flow.value->talos_factory->schematic;
  EXPECT_EQ(a, b);
  EXPECT_EQ(SchematicYaml(a), SchematicYaml(b));
  EXPECT_EQ(SchematicYaml(a),
            "overlay:\n    image: siderolabs/sbc-raspberrypi\n    name: rpi_generic\n"
            "    options:\n        a:\n            - x\n            - y\n        z: 1\n"
            "customization:\n    meta:\n        - key: 1\n          value: bar\n"
            "        - key: 10\n          value: foo\n    systemExtensions:\n"
            "        officialExtensions:\n            - siderolabs/iscsi-tools\n"
            "            - siderolabs/zfs\n");
}

TEST(SchematicDecodeTest, ImageAndSchematicExcludeEachOther) {
  EXPECT_THAT(Errors(SchematicProfile("    version: 1.12.0\n    image: ghcr.io/siderolabs/installer\n"
                             "    schematic: {}")),
              ElementsAre("clusters/edge.yaml:11:16: spec.talos.schematic: image and schematic "
                          "exclude each other: keep one"));
  EXPECT_THAT(Errors(SchematicProfile("    version: 1.12.0")),
              ElementsAre("clusters/edge.yaml:9:5: spec.talos: must set image (an installer "
                          "repository) or schematic (Image Factory)"));
}

TEST(SchematicDecodeTest, FactoryKeysNeedASchematic) {
  EXPECT_THAT(Errors(SchematicProfile("    version: 1.12.0\n    image: ghcr.io/siderolabs/installer\n"
                             "    factory: https://factory.talos.dev\n    platform: aws\n"
                             "    secureboot: false")),
              ElementsAre("clusters/edge.yaml:11:14: spec.talos.factory: is set only with "
                          "schematic",
                          "clusters/edge.yaml:12:15: spec.talos.platform: is set only with "
                          "schematic",
                          "clusters/edge.yaml:13:17: spec.talos.secureboot: is set only with "
                          "schematic"));
}

struct BadTalosCase {
  std::string name;
  std::string talos;  // after "    version: 1.12.0\n"
  std::string error;  // the one diagnostic
};
void PrintTo(const BadTalosCase& c, std::ostream* os) { *os << c.name; }

class BadTalosTest : public testing::TestWithParam<BadTalosCase> {};

TEST_P(BadTalosTest, ReportsTheOneErrorWithItsPosition) {
  EXPECT_THAT(Errors(SchematicProfile("    version: 1.12.0\n" + GetParam().talos)),
              ElementsAre(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadTalosTest,
    testing::Values(
        BadTalosCase{"UnknownTopKey", "    schematic: {customisation: {}}",
                     "clusters/edge.yaml:10:17: spec.talos.schematic.customisation: unknown key "
                     "\"customisation\" (did you mean \"customization\"?)"},
        BadTalosCase{"UnknownCustomizationKey",
                     "    schematic:\n      customization:\n        bootloader: sd-boot",
                     "clusters/edge.yaml:12:9: spec.talos.schematic.customization.bootloader: "
                     "unknown key \"bootloader\""},
        BadTalosCase{"UnknownOverlayKey",
                     "    schematic: {overlay: {image: a/b, name: n, option: {}}}",
                     "clusters/edge.yaml:10:48: spec.talos.schematic.overlay.option: unknown key "
                     "\"option\" (did you mean \"options\"?)"},
        BadTalosCase{"ExtensionWithoutVendor",
                     "    schematic: {customization: {systemExtensions: {officialExtensions: "
                     "[iscsi-tools]}}}",
                     "clusters/edge.yaml:10:73: "
                     "spec.talos.schematic.customization.systemExtensions.officialExtensions[0]: "
                     "must be an official extension as vendor/name, lowercase letters, digits "
                     "and '-' (e.g. siderolabs/iscsi-tools)"},
        BadTalosCase{"ExtensionUppercase",
                     "    schematic: {customization: {systemExtensions: {officialExtensions: "
                     "[Siderolabs/zfs]}}}",
                     "clusters/edge.yaml:10:73: "
                     "spec.talos.schematic.customization.systemExtensions.officialExtensions[0]: "
                     "must be an official extension as vendor/name, lowercase letters, digits "
                     "and '-' (e.g. siderolabs/iscsi-tools)"},
        BadTalosCase{"DuplicateExtension",
                     "    schematic: {customization: {systemExtensions: {officialExtensions: "
                     "[siderolabs/zfs, siderolabs/zfs]}}}",
                     "clusters/edge.yaml:10:89: "
                     "spec.talos.schematic.customization.systemExtensions.officialExtensions[1]: "
                     "\"siderolabs/zfs\" is already listed at "
                     "spec.talos.schematic.customization.systemExtensions.officialExtensions[0]"},
        BadTalosCase{"EmptyKernelArg", "    schematic: {customization: {extraKernelArgs: [\"\"]}}",
                     "clusters/edge.yaml:10:51: spec.talos.schematic.customization."
                     "extraKernelArgs[0]: must not be empty"},
        BadTalosCase{"WhitespaceKernelArg",
                     "    schematic: {customization: {extraKernelArgs: [\"  \"]}}",
                     "clusters/edge.yaml:10:51: spec.talos.schematic.customization."
                     "extraKernelArgs[0]: must be one kernel argument, without whitespace"},
        BadTalosCase{"KernelArgNotAString",
                     "    schematic: {customization: {extraKernelArgs: [[a]]}}",
                     "clusters/edge.yaml:10:51: spec.talos.schematic.customization."
                     "extraKernelArgs[0]: must be a string, not a list"},
        BadTalosCase{"MetaKeyTooLarge",
                     "    schematic: {customization: {meta: [{key: 256, value: x}]}}",
                     "clusters/edge.yaml:10:46: spec.talos.schematic.customization.meta[0].key: "
                     "must be a META key from 0 to 255 (0xff), without quotes"},
        BadTalosCase{"MetaKeyQuoted",
                     "    schematic: {customization: {meta: [{key: \"10\", value: x}]}}",
                     "clusters/edge.yaml:10:46: spec.talos.schematic.customization.meta[0].key: "
                     "must be a META key from 0 to 255 (0xff), without quotes"},
        BadTalosCase{"MetaKeyRepeated",
                     "    schematic: {customization: {meta: [{key: 10, value: x}, "
                     "{key: 0xa, value: y}]}}",
                     "clusters/edge.yaml:10:67: spec.talos.schematic.customization.meta[1].key: "
                     "META key 10 is already set at spec.talos.schematic.customization.meta[0]"},
        BadTalosCase{"MetaValueMissing", "    schematic: {customization: {meta: [{key: 10}]}}",
                     "clusters/edge.yaml:10:40: spec.talos.schematic.customization.meta[0].value: "
                     "is required"},
        BadTalosCase{"OverlayWithoutName", "    schematic: {overlay: {image: siderolabs/x}}",
                     "clusters/edge.yaml:10:26: spec.talos.schematic.overlay.name: is required"},
        BadTalosCase{"OverlayOptionsNotAMapping",
                     "    schematic: {overlay: {image: a/b, name: n, options: [1]}}",
                     "clusters/edge.yaml:10:57: spec.talos.schematic.overlay.options: must be a "
                     "mapping, not a list"},
        BadTalosCase{"SchematicNotAMapping", "    schematic: [a]",
                     "clusters/edge.yaml:10:16: spec.talos.schematic: must be a mapping, not a "
                     "list"},
        BadTalosCase{"UnknownPlatform", "    schematic: {}\n    platform: Metal",
                     "clusters/edge.yaml:11:15: spec.talos.platform: must be an Image Factory "
                     "platform: metal, aws, gcp, equinixMetal, azure, digital-ocean, nocloud, "
                     "openstack, vmware, akamai, cloudstack, hcloud, oracle, upcloud, vultr, "
                     "exoscale, opennebula or scaleway"},
        BadTalosCase{"FactoryWithPath",
                     "    schematic: {}\n    factory: https://factory.talos.dev/schematics",
                     "clusters/edge.yaml:11:14: spec.talos.factory: must be scheme://host[:port] "
                     "only: no path, query, fragment or user"},
        BadTalosCase{"FactoryNotHttp", "    schematic: {}\n    factory: factory.talos.dev",
                     "clusters/edge.yaml:11:14: spec.talos.factory: must be an http:// or "
                     "https:// URL"},
        BadTalosCase{"SecurebootQuoted", "    schematic: {}\n    secureboot: \"true\"",
                     "clusters/edge.yaml:11:17: spec.talos.secureboot: must be true or false, "
                     "without quotes"},
        BadTalosCase{"FileAndInline", "    schematic: {file: schematics/a.yaml, customization: {}}",
                     "clusters/edge.yaml:10:42: spec.talos.schematic.customization: a schematic "
                     "is written inline or as {file: schematics/<name>.yaml}, not both"},
        BadTalosCase{"FileOutsideSchematics", "    schematic: {file: ../secrets.yaml}",
                     "clusters/edge.yaml:10:23: spec.talos.schematic.file: must be "
                     "schematics/<name>.yaml: a file directly in schematics/, named with "
                     "letters, digits, '.', '_' or '-' (no \"..\", not starting with '.')"},
        BadTalosCase{"FileInASubdirectory", "    schematic: {file: schematics/a/b.yaml}",
                     "clusters/edge.yaml:10:23: spec.talos.schematic.file: must be "
                     "schematics/<name>.yaml: a file directly in schematics/, named with "
                     "letters, digits, '.', '_' or '-' (no \"..\", not starting with '.')"},
        BadTalosCase{"FileWithDotDot", "    schematic: {file: schematics/..yaml}",
                     "clusters/edge.yaml:10:23: spec.talos.schematic.file: must be "
                     "schematics/<name>.yaml: a file directly in schematics/, named with "
                     "letters, digits, '.', '_' or '-' (no \"..\", not starting with '.')"},
        BadTalosCase{"FileYml", "    schematic: {file: schematics/a.yml}",
                     "clusters/edge.yaml:10:23: spec.talos.schematic.file: must be "
                     "schematics/<name>.yaml: a file directly in schematics/, named with "
                     "letters, digits, '.', '_' or '-' (no \"..\", not starting with '.')"},
        BadTalosCase{"FileMissing", "    schematic: {file: schematics/gpu.yaml}",
                     "clusters/edge.yaml:10:23: spec.talos.schematic.file: schematics/gpu.yaml "
                     "does not exist in the repository"}),
    [](const testing::TestParamInfo<BadTalosCase>& param_info) { return param_info.param.name; });

TEST(SchematicDecodeTest, ANodeMayOverrideTheSchematic) {
  const SourceFile gpu =
      SchematicSource("schematics/gpu.yaml",
                      "customization:\n  systemExtensions:\n    officialExtensions: "
                      "[siderolabs/nvidia-open-gpu-kernel-modules-production]\n");
  const SchematicFiles files{{gpu.path, &gpu}};
  Decoded<ClusterProfile> decoded =
      DecodeEdge(SchematicProfile("    version: 1.12.0\n    schematic: {}",
                         "      schematic: {file: schematics/gpu.yaml}"),
                 files);
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  const ClusterProfile& p = *decoded.value;
  EXPECT_FALSE(p.nodes[0].schematic.has_value());
  ASSERT_TRUE(p.nodes[1].schematic.has_value());
  EXPECT_EQ(p.nodes[1].schematic->file, "schematics/gpu.yaml");
  EXPECT_THAT(p.nodes[1].schematic->official_extensions,
              ElementsAre("siderolabs/nvidia-open-gpu-kernel-modules-production"));

  Decoded<ClusterProfile> inline_node =
      DecodeEdge(SchematicProfile("    version: 1.12.0\n    schematic: {}",
                         "      schematic: {customization: {extraKernelArgs: [quiet]}}"));
  ASSERT_TRUE(inline_node.ok());
  EXPECT_THAT(inline_node.value->nodes[1].schematic->extra_kernel_args, ElementsAre("quiet"));
}

// An error elsewhere in the profile does not make a good node schematic fail, which would
// hide the checks that need every node (an endpoint naming a worker here).
TEST(SchematicDecodeTest, OtherErrorsDoNotHideTheNodeCrossChecks) {
  std::string profile = SchematicProfile("    version: 1.12.0\n    schematic: {}", "      schematic: {}");
  profile =
      ReplaceOnce(ReplaceOnce(profile, "name: edge", "name: edgy"), "[10.0.0.11]", "[10.0.1.21]");
  EXPECT_THAT(Errors(profile),
              ElementsAre("clusters/edge.yaml:4:9: metadata.name: must match the file name: "
                          "\"edge\" (clusters/edge.yaml)",
                          "clusters/edge.yaml:6:15: spec.endpoints[0]: 10.0.1.21 is the address "
                          "of worker \"w-0\"; endpoints must be controlplane nodes"));
}

TEST(SchematicDecodeTest, ImageWithSchematicReportsOnlyTheExclusion) {
  EXPECT_THAT(Errors(SchematicProfile("    version: 1.12.0\n    image: ghcr.io/siderolabs/installer\n"
                             "    schematic: {}\n    platform: aws")),
              ElementsAre("clusters/edge.yaml:11:16: spec.talos.schematic: image and schematic "
                          "exclude each other: keep one"));
}

TEST(SchematicDecodeTest, ANodeSchematicNeedsTheProfileSchematic) {
  EXPECT_THAT(Errors(SchematicProfile("    version: 1.12.0\n    image: ghcr.io/siderolabs/installer",
                             "      schematic: {}")),
              ElementsAre("clusters/edge.yaml:18:18: spec.nodes[1].schematic: is set only when "
                          "spec.talos uses schematic, not image"));
}

TEST(SchematicDecodeTest, AnInvalidNodeSchematicIsReportedAtTheNode) {
  EXPECT_THAT(Errors(SchematicProfile("    version: 1.12.0\n    schematic: {}",
                             "      schematic: {customization: {extraKernelArgs: [\"\"]}}")),
              ElementsAre("clusters/edge.yaml:18:53: "
                          "spec.nodes[1].schematic.customization.extraKernelArgs[0]: must not be "
                          "empty"));
}

TEST(SchematicDecodeTest, AnInvalidReferencedFileIsReportedAtBothPlaces) {
  const SourceFile bad =
      SchematicSource("schematics/edge.yaml",
                      "customization:\n  extraKernelArgs: [quiet]\n  systemExtension: {}\n");
  const SchematicFiles files{{bad.path, &bad}};
  const std::string profile =
      SchematicProfile("    version: 1.12.0\n    schematic: {file: schematics/edge.yaml}",
              "      schematic: {file: schematics/edge.yaml}");
  EXPECT_THAT(
      Errors(profile, files),
      ElementsAre("clusters/edge.yaml:10:23: spec.talos.schematic.file: schematics/edge.yaml is "
                  "invalid; its errors are listed under its name",
                  "clusters/edge.yaml:18:25: spec.nodes[1].schematic.file: schematics/edge.yaml "
                  "is invalid; its errors are listed under its name",
                  // Once, though referenced twice.
                  "schematics/edge.yaml:3:3: customization.systemExtension: unknown key "
                  "\"systemExtension\" (did you mean \"systemExtensions\"?)"));
}

TEST(SchematicDecodeTest, AnOversizedReferencedFileIsAnError) {
  SourceFile big = SchematicSource("schematics/big.yaml", "");
  big.oversized = true;
  const SchematicFiles files{{big.path, &big}};
  EXPECT_THAT(
      Errors(SchematicProfile("    version: 1.12.0\n    schematic: {file: schematics/big.yaml}"), files),
      ElementsAre("clusters/edge.yaml:10:23: spec.talos.schematic.file: "
                  "schematics/big.yaml is larger than 1 MiB"));
}

TEST(SchematicFileTest, DecodesTheFactorysOwnShape) {
  Decoded<Schematic> decoded = DecodeSchematicFile("schematics/a.yaml", R"(customization:
  extraKernelArgs:
    - net.ifnames=0
  systemExtensions:
    officialExtensions:
      - siderolabs/iscsi-tools
)");
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  EXPECT_EQ(decoded.value->file, "schematics/a.yaml");
  EXPECT_THAT(decoded.value->extra_kernel_args, ElementsAre("net.ifnames=0"));
  EXPECT_THAT(decoded.value->official_extensions, ElementsAre("siderolabs/iscsi-tools"));
}

TEST(SchematicFileTest, RefusesAHeaderAndAnchors) {
  Decoded<Schematic> header =
      DecodeSchematicFile("schematics/a.yaml", "apiVersion: v1\ncustomization: {}\n");
  EXPECT_THAT(DiagnosticStrings(header.diagnostics),
              ElementsAre("schematics/a.yaml:1:1: apiVersion: unknown key \"apiVersion\""));
  Decoded<Schematic> anchors =
      DecodeSchematicFile("schematics/a.yaml", "customization: &c {}\noverlay: *c\n");
  EXPECT_FALSE(anchors.ok());
  EXPECT_FALSE(anchors.diagnostics.empty());
}

TEST(SchematicFileTest, OnlyFilesDirectlyInSchematicsAreSchematicFiles) {
  EXPECT_TRUE(IsSchematicFilePath("schematics/edge.yaml"));
  EXPECT_TRUE(IsSchematicFilePath("schematics/GPU_v2.yaml"));
  EXPECT_FALSE(IsSchematicFilePath("schematics/.yaml"));
  EXPECT_FALSE(IsSchematicFilePath("schematics/.hidden.yaml"));
  EXPECT_FALSE(IsSchematicFilePath("schematics/a/b.yaml"));
  EXPECT_FALSE(IsSchematicFilePath("schematics/a.yml"));
  EXPECT_FALSE(IsSchematicFilePath("clusters/a.yaml"));
  EXPECT_FALSE(IsSchematicFilePath("schematics/a b.yaml"));
}

constexpr std::string_view kDefaultsWithFactory = R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: RepositoryDefaults
imageFactory: https://factory.internal:8443
)";

std::string NamedProfile(std::string_view name, std::string_view talos) {
  std::string text = SchematicProfile(talos);
  return ReplaceOnce(ReplaceOnce(text, "name: edge", fmt::format("name: {}", name)),
                     "credentials: edge", fmt::format("credentials: {}", name));
}

TEST(SchematicProfileSetTest, ResolvesReferencesAndFillsTheFactoryDefault) {
  ProfileSet set = DecodeProfileSet({
      SchematicSource("reconciler.yaml", std::string(kDefaultsWithFactory)),
      SchematicSource(
          "clusters/a.yaml",
          NamedProfile("a", "    version: 1.12.0\n    schematic: {file: schematics/edge.yaml}")),
      SchematicSource("clusters/b.yaml", NamedProfile("b",
                                                      "    version: 1.12.0\n    schematic: {}\n"
                                                      "    factory: https://factory.talos.dev")),
      SchematicSource(
          "clusters/c.yaml",
          NamedProfile("c", "    version: 1.12.0\n    image: ghcr.io/siderolabs/installer")),
      SchematicSource("schematics/edge.yaml", "customization: {extraKernelArgs: [quiet]}\n"),
  });
  EXPECT_THAT(set.invalid, IsEmpty());
  ASSERT_EQ(set.profiles.size(), 3u);
  EXPECT_EQ(set.profiles[0].talos_factory->factory, "https://factory.internal:8443");
  EXPECT_EQ(set.profiles[0].talos_factory->schematic.file, "schematics/edge.yaml");
  EXPECT_THAT(set.profiles[0].talos_factory->schematic.extra_kernel_args, ElementsAre("quiet"));
  EXPECT_EQ(set.profiles[1].talos_factory->factory, "https://factory.talos.dev");
  EXPECT_FALSE(set.profiles[2].talos_factory.has_value());
  EXPECT_EQ(set.profiles[2].InstallerImage(), "ghcr.io/siderolabs/installer:v1.12.0");
}

TEST(SchematicProfileSetTest, WithoutADefaultTheFactoryStaysEmptyForTheDaemon) {
  ProfileSet set = DecodeProfileSet({SchematicSource(
      "clusters/a.yaml", NamedProfile("a", "    version: 1.12.0\n    schematic: {}"))});
  ASSERT_EQ(set.profiles.size(), 1u);
  EXPECT_EQ(set.profiles[0].talos_factory->factory, "");
}

TEST(SchematicProfileSetTest, AMissingOrInvalidFileMakesTheProfileInvalid) {
  ProfileSet set = DecodeProfileSet({
      SchematicSource(
          "clusters/a.yaml",
          NamedProfile("a", "    version: 1.12.0\n    schematic: {file: schematics/none.yaml}")),
      SchematicSource(
          "clusters/b.yaml",
          NamedProfile("b", "    version: 1.12.0\n    schematic: {file: schematics/bad.yaml}")),
      SchematicSource("schematics/bad.yaml", "customization:\n  meta: [{key: 300, value: x}]\n"),
  });
  EXPECT_THAT(set.profiles, IsEmpty());
  ASSERT_EQ(set.invalid.size(), 2u);
  EXPECT_THAT(DiagnosticStrings(set.invalid[0].diagnostics),
              ElementsAre("clusters/a.yaml:10:23: spec.talos.schematic.file: "
                          "schematics/none.yaml does not exist in the repository"));
  EXPECT_THAT(DiagnosticStrings(set.invalid[1].diagnostics),
              ElementsAre("clusters/b.yaml:10:23: spec.talos.schematic.file: schematics/bad.yaml "
                          "is invalid; its errors are listed under its name",
                          "schematics/bad.yaml:2:16: customization.meta[0].key: must be a META "
                          "key from 0 to 255 (0xff), without quotes"));
}

TEST(SchematicProfileSetTest, AnInvalidImageFactoryDefaultInvalidatesTheDefaults) {
  Decoded<RepositoryDefaults> decoded = DecodeRepositoryDefaults(
      "reconciler.yaml",
      "apiVersion: talos-reconciler.dev/v1alpha1\nkind: RepositoryDefaults\n"
      "imageFactory: ftp://factory.talos.dev\n");
  EXPECT_THAT(DiagnosticStrings(decoded.diagnostics),
              ElementsAre("reconciler.yaml:3:15: imageFactory: must be an http:// or https:// "
                          "URL"));
}

}  // namespace
}  // namespace tr::core
