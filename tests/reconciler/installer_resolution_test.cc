// A schematic profile's installer from the factory's ID, and what stops it.
#include "reconciler/clients/factory/installer_resolution.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/schematic.h"
#include "tests/support/fleet_fixtures.h"

namespace tr::reconciler::factory {
namespace {

using ::testing::HasSubstr;

constexpr char kIscsiId[] = "613e1592b2da41ae5e265e8789429f22e121aab91cb4deb6bc3c0b6262961245";
const std::string kGpuId(64, 'd');  // what the fake gives a schematic naming nvidia

struct FakeFactory {
  int schematic_calls = 0, extension_calls = 0;
  std::string asked_origin, asked_yaml;
  absl::Status down = absl::OkStatus();
  std::vector<std::string> extensions = {"siderolabs/iscsi-tools", "siderolabs/util-linux-tools"};

  SchematicIds::Creator Creator() {
    return [this](std::string_view origin, std::string_view yaml) -> absl::StatusOr<std::string> {
      ++schematic_calls;
      asked_origin = origin;
      asked_yaml = yaml;
      if (!down.ok()) return down;
      return yaml.find("nvidia") == std::string_view::npos ? std::string(kIscsiId) : kGpuId;
    };
  }
  InstallerResolver::ExtensionLister Lister() {
    return
        [this](std::string_view, const core::Version&) -> absl::StatusOr<std::vector<std::string>> {
          ++extension_calls;
          if (!down.ok()) return down;
          return extensions;
        };
  }
};

core::ClusterProfile SchematicProfile(std::string factory) {
  core::ClusterProfile profile = core::testing_fixtures::MakeProfile(
      core::testing_fixtures::FiveNodes("1.12.0", "1.35.0"), "1.14.0", "1.35.0");
  profile.talos_image.clear();
  profile.talos_factory = core::FactoryInstaller{};
  profile.talos_factory->factory = std::move(factory);
  profile.talos_factory->schematic.official_extensions = {"siderolabs/iscsi-tools"};
  return profile;
}

TEST(InstallerResolverTest, FillsTheFactoryInstallerOfTheSchematicsId) {
  FakeFactory factory;
  SchematicIds ids("", factory.Creator());
  InstallerResolver resolver("http://127.0.0.1:7000", ids, factory.Lister());
  auto resolved = resolver.Resolve(SchematicProfile(""));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->talos_image, std::string("127.0.0.1:7000/metal-installer/") + kIscsiId);
  EXPECT_EQ(resolved->talos_schematic_id, kIscsiId);
  EXPECT_EQ(resolved->InstallerImage(),
            std::string("127.0.0.1:7000/metal-installer/") + kIscsiId + ":v1.14.0");
  EXPECT_EQ(factory.asked_origin, "http://127.0.0.1:7000");
  EXPECT_EQ(factory.asked_yaml, core::SchematicYaml(SchematicProfile("").talos_factory->schematic));
  // Known afterwards: a second reconcile asks the factory nothing.
  ASSERT_TRUE(resolver.Resolve(SchematicProfile("")).ok());
  EXPECT_EQ(factory.schematic_calls, 1);
  EXPECT_EQ(factory.extension_calls, 1);
}

// w-1 names a schematic of its own (a GPU worker).
core::ClusterProfile WithGpuWorker(core::ClusterProfile profile) {
  core::NodeSpec& gpu = profile.nodes[4];
  gpu.schematic = core::Schematic{};
  gpu.schematic->official_extensions = {"siderolabs/nvidia-container-toolkit"};
  return profile;
}

TEST(InstallerResolverTest, ANodesOwnSchematicGetsItsOwnIdAndInstaller) {
  FakeFactory factory;
  factory.extensions.push_back("siderolabs/nvidia-container-toolkit");
  SchematicIds ids("", factory.Creator());
  InstallerResolver resolver("http://127.0.0.1:7000", ids, factory.Lister());
  core::ClusterProfile profile = WithGpuWorker(SchematicProfile(""));
  profile.talos_factory->secureboot = true;
  auto resolved = resolver.Resolve(profile);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->talos_schematic_id, kIscsiId);
  EXPECT_EQ(resolved->nodes[4].talos_schematic_id, kGpuId);
  EXPECT_EQ(resolved->nodes[4].talos_image, "127.0.0.1:7000/metal-installer-secureboot/" + kGpuId);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(resolved->nodes[i].talos_image, "") << i;
    EXPECT_EQ(resolved->nodes[i].talos_schematic_id, "") << i;
  }
  EXPECT_EQ(factory.schematic_calls, 2);
}

TEST(InstallerResolverTest, ANodesMissingExtensionFailsNamingTheNode) {
  FakeFactory factory;
  SchematicIds ids("", factory.Creator());
  InstallerResolver resolver("http://127.0.0.1:7000", ids, factory.Lister());
  auto resolved = resolver.Resolve(WithGpuWorker(SchematicProfile("")));
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(resolved.status().message(), HasSubstr("node w-1's schematic"));
  EXPECT_THAT(resolved.status().message(),
              HasSubstr("has no extension siderolabs/nvidia-container-toolkit for Talos 1.14.0"));
}

TEST(InstallerResolverTest, TheProfilesFactoryComesBeforeTheFlagsAndSecureBootNamesItsInstaller) {
  FakeFactory factory;
  SchematicIds ids("", factory.Creator());
  InstallerResolver resolver("http://127.0.0.1:7000", ids, factory.Lister());
  core::ClusterProfile profile = SchematicProfile("https://127.0.0.2:7443");
  profile.talos_factory->platform = "aws";
  profile.talos_factory->secureboot = true;
  auto resolved = resolver.Resolve(profile);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->talos_image,
            std::string("127.0.0.2:7443/aws-installer-secureboot/") + kIscsiId);
  EXPECT_EQ(factory.asked_origin, "https://127.0.0.2:7443");
}

TEST(InstallerResolverTest, AProfileWithAnImageIsLeftAsItIs) {
  FakeFactory factory;
  SchematicIds ids("", factory.Creator());
  InstallerResolver resolver("", ids, factory.Lister());
  core::ClusterProfile profile = core::testing_fixtures::MakeProfile(
      core::testing_fixtures::FiveNodes("1.12.0", "1.35.0"), "1.14.0", "1.35.0");
  auto resolved = resolver.Resolve(profile);
  ASSERT_TRUE(resolved.ok());
  EXPECT_EQ(resolved->talos_image, profile.talos_image);
  EXPECT_EQ(factory.schematic_calls + factory.extension_calls, 0);
}

TEST(InstallerResolverTest, NoFactoryAnywhereSaysWhereToNameOne) {
  FakeFactory factory;
  SchematicIds ids("", factory.Creator());
  InstallerResolver resolver("", ids, factory.Lister());
  auto resolved = resolver.Resolve(SchematicProfile(""));
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(resolved.status().message(), HasSubstr("--image-factory"));
  EXPECT_EQ(factory.schematic_calls, 0);
}

TEST(InstallerResolverTest, AnExtensionTheFactoryLacksForTheTargetIsRefusedNamingIt) {
  FakeFactory factory;
  factory.extensions = {"siderolabs/qemu-guest-agent"};
  SchematicIds ids("", factory.Creator());
  InstallerResolver resolver("http://127.0.0.1:7000", ids, factory.Lister());
  auto resolved = resolver.Resolve(SchematicProfile(""));
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(resolved.status().message(),
              HasSubstr("has no extension siderolabs/iscsi-tools for Talos 1.14.0"));
  EXPECT_EQ(factory.schematic_calls, 0);
  // Published later: asked again, and accepted.
  factory.extensions.push_back("siderolabs/iscsi-tools");
  EXPECT_TRUE(resolver.Resolve(SchematicProfile("")).ok());
  EXPECT_EQ(factory.extension_calls, 2);
}

TEST(InstallerResolverTest, AFactoryThatIsDownIsItsErrorNamingItAndANodeInFlightSkipsTheCheck) {
  FakeFactory factory;
  factory.down = absl::UnavailableError("GET http://127.0.0.1:7000/versions: HTTP 500");
  SchematicIds ids("", factory.Creator());
  InstallerResolver resolver("http://127.0.0.1:7000", ids, factory.Lister());
  auto resolved = resolver.Resolve(SchematicProfile(""));
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(resolved.status().message(), HasSubstr("http://127.0.0.1:7000"));
  factory.down = absl::OkStatus();
  ASSERT_TRUE(resolver.Resolve(SchematicProfile("")).ok());  // it came back
  factory.down = absl::DeadlineExceededError("hangs");
  EXPECT_TRUE(resolver.Resolve(SchematicProfile(""), /*check_extensions=*/false).ok());
}

}  // namespace
}  // namespace tr::reconciler::factory
