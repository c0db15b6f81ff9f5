#include "core/adopted_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile_set.h"

namespace tr::core {
namespace {

using testing::HasSubstr;
using testing::Not;

constexpr char kSchematic[] = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";
constexpr char kOther[] = "ee21ef4a5ef808a9b7484cc0dda0f25075021691c8c09a276591eedb638ea1f9";

AdoptedNode AdoptNode(std::string name, std::string address, NodeRole role,
                 std::string talos = "1.11.6", std::string kubelet = "1.34.1") {
  AdoptedNode node;
  node.name = std::move(name);
  node.address = std::move(address);
  node.role = role;
  node.seen.name = node.name;
  node.seen.talos = *ParseTalosVersion(talos);
  node.seen.kubelet = *ParseKubernetesVersion(kubelet);
  node.install_image = "ghcr.io/siderolabs/installer:v1.10.3";
  return node;
}

AdoptInput AdoptFiveNodes() {
  AdoptInput input;
  input.name = "prod";
  input.credentials = "prod";
  input.endpoints = {"10.0.0.12", "10.0.0.99:50001"};  // a load balancer's is not a node's
  input.nodes = {AdoptNode("w-1", "10.0.1.22", NodeRole::kWorker),
                 AdoptNode("cp-1", "10.0.0.12", NodeRole::kControlPlane),
                 AdoptNode("w-0", "10.0.1.21", NodeRole::kWorker),
                 AdoptNode("cp-0", "10.0.0.11", NodeRole::kControlPlane),
                 AdoptNode("cp-2", "10.0.0.13", NodeRole::kControlPlane)};
  return input;
}

ProfileSet AdoptedSet(const std::string& yaml) {
  return DecodeProfileSet({{"clusters/prod.yaml", yaml}});
}

TEST(AdoptedProfileTest, WritesAValidProfileOfWhatRunsNow) {
  const absl::StatusOr<std::string> yaml = AdoptedProfileYaml(AdoptFiveNodes());
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  const ProfileSet set = AdoptedSet(*yaml);
  ASSERT_EQ(set.profiles.size(), 1u) << *yaml
                                     << (set.invalid.empty()
                                             ? ""
                                             : set.invalid.front().diagnostics.front().ToString());
  const ClusterProfile& p = set.profiles.front();
  EXPECT_EQ(p.name, "prod");
  EXPECT_EQ(p.credentials, "prod");
  EXPECT_EQ(p.endpoints, std::vector<std::string>{"10.0.0.12"});
  EXPECT_EQ(p.talos_version.ToString(), "1.11.6");
  EXPECT_EQ(p.talos_image, "ghcr.io/siderolabs/installer");
  EXPECT_EQ(p.kubernetes_version.ToString(), "1.34.1");
  std::vector<std::string> names;
  for (const NodeSpec& n : p.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"cp-0", "cp-1", "cp-2", "w-0", "w-1"}));
  EXPECT_EQ(p.nodes[0].role, NodeRole::kControlPlane);
  EXPECT_EQ(p.nodes[3].role, NodeRole::kWorker);
  EXPECT_EQ(p.nodes[4].address, "10.0.1.22");
}

TEST(AdoptedProfileTest, WithoutAControlPlaneEndpointEveryControlPlaneIsOne) {
  AdoptInput input = AdoptFiveNodes();
  input.endpoints = {"vip.example.com"};
  const ProfileSet set = AdoptedSet(*AdoptedProfileYaml(input));
  ASSERT_EQ(set.profiles.size(), 1u);
  EXPECT_EQ(set.profiles.front().endpoints,
            (std::vector<std::string>{"10.0.0.11", "10.0.0.12", "10.0.0.13"}));
}

TEST(AdoptedProfileTest, AFactoryImageTakesTheSchematicTheNodesBooted) {
  AdoptInput input = AdoptFiveNodes();
  for (AdoptedNode& node : input.nodes) {
    node.install_image = std::string("factory.example.com/metal-installer/") + kSchematic +
                         ":v1.10.3";
    node.seen.schematic = kOther;
    node.seen.extensions = {"iscsi-tools v1.11.6"};
  }
  const absl::StatusOr<std::string> yaml = AdoptedProfileYaml(input);
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  EXPECT_EQ(AdoptedSet(*yaml).profiles.at(0).talos_image,
            std::string("factory.example.com/metal-installer/") + kOther);
  EXPECT_THAT(*yaml, HasSubstr(std::string("schematic ") + kOther));
  EXPECT_THAT(*yaml, HasSubstr("iscsi-tools v1.11.6"));
}

// A factory installer's URL gives the factory, platform and SecureBoot, the nodes' extensions
// the schematic to prove; written, it declares the schematic instead of naming the installer.
TEST(AdoptedProfileTest, AProvenSchematicIsDeclaredInsteadOfTheInstaller) {
  AdoptInput input = AdoptFiveNodes();
  for (AdoptedNode& node : input.nodes) {
    node.install_image =
        std::string("factory.example.com/aws-installer-secureboot/") + kOther + ":v1.11.6";
    node.seen.schematic = kOther;
    node.seen.extensions = {"util-linux-tools 2.40", "iscsi-tools v0.1.6"};
  }
  const std::optional<SchematicCandidate> candidate = FindSchematicCandidate(input.nodes);
  ASSERT_TRUE(candidate.has_value());
  EXPECT_EQ(candidate->id, kOther);
  EXPECT_EQ(candidate->installer.factory, "https://factory.example.com");
  EXPECT_EQ(candidate->installer.platform, "aws");
  EXPECT_TRUE(candidate->installer.secureboot);
  EXPECT_EQ(candidate->installer.schematic.official_extensions,
            (std::vector<std::string>{"siderolabs/iscsi-tools", "siderolabs/util-linux-tools"}));

  input.schematic = candidate->installer;
  const absl::StatusOr<std::string> yaml = AdoptedProfileYaml(input);
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  const ProfileSet set = AdoptedSet(*yaml);
  ASSERT_EQ(set.profiles.size(), 1u) << *yaml;
  const ClusterProfile& profile = set.profiles.front();
  ASSERT_TRUE(profile.talos_factory.has_value()) << *yaml;
  EXPECT_EQ(*profile.talos_factory, candidate->installer);
  EXPECT_THAT(*yaml, Not(HasSubstr("image:")));

  // Nodes on a plain installer, or on two schematics, give no candidate.
  input.nodes.front().seen.schematic = kSchematic;
  EXPECT_FALSE(FindSchematicCandidate(input.nodes).has_value());
  EXPECT_FALSE(FindSchematicCandidate(AdoptFiveNodes().nodes).has_value());
}

TEST(AdoptedProfileTest, NodesMidRolloutAreRefusedByName) {
  AdoptInput input = AdoptFiveNodes();
  input.nodes[0].seen.talos = *ParseTalosVersion("1.12.0");
  const absl::StatusOr<std::string> yaml = AdoptedProfileYaml(input);
  ASSERT_FALSE(yaml.ok());
  EXPECT_THAT(std::string(yaml.status().message()), HasSubstr("1.12.0 (w-1)"));
  EXPECT_THAT(std::string(yaml.status().message()), HasSubstr("1.11.6 (cp-0, cp-1, cp-2, w-0)"));
}

TEST(AdoptedProfileTest, InstallersThatDifferNeedImage) {
  AdoptInput input = AdoptFiveNodes();
  input.nodes[2].install_image = "registry.example.com/talos/installer:v1.11.6";
  EXPECT_THAT(std::string(AdoptedProfileYaml(input).status().message()), HasSubstr("pass --image"));
  input.image = "registry.example.com/talos/installer";
  const absl::StatusOr<std::string> yaml = AdoptedProfileYaml(input);
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  EXPECT_EQ(AdoptedSet(*yaml).profiles.at(0).talos_image, "registry.example.com/talos/installer");
}

TEST(AdoptedProfileTest, ANodeThatDoesNotAnswerIsNamed) {
  AdoptInput input = AdoptFiveNodes();
  input.nodes[1].seen.reachable = false;
  input.nodes[1].seen.talos.reset();
  EXPECT_THAT(std::string(AdoptedProfileYaml(input).status().message()),
              HasSubstr("no answer from the Talos API of cp-1"));
}

TEST(AdoptedProfileTest, InstallerRepositoryDropsTagAndDigest) {
  EXPECT_EQ(InstallerRepository("ghcr.io/siderolabs/installer:v1.11.6"),
            "ghcr.io/siderolabs/installer");
  EXPECT_EQ(InstallerRepository("localhost:5000/installer@sha256:abcd"), "localhost:5000/installer");
  EXPECT_EQ(InstallerRepository("localhost:5000/installer"), "localhost:5000/installer");
  EXPECT_THAT(InstallerRepository("localhost:5000/installer:v1"), Not(HasSubstr(":v1")));
}

}  // namespace
}  // namespace tr::core
