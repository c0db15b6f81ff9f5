// A node's schematic over the Talos COSI API (mutual TLS), and installers from the simulated
// Image Factory (real HTTP on 127.0.0.1): ExtensionStatuses and ImageFactorySchematics by
// version, a custom schematic installed by an upgrade, installers the factory does not build.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "cosi/resource/state.grpc.pb.h"
#include "machine/image.grpc.pb.h"
#include "machine/lifecycle.grpc.pb.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tests/sim/catalog/image_registry.h"
#include "tests/sim/test_client.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

using testing::Call;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using namespace std::chrono_literals;

constexpr const char* kCustom = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

constexpr const char* kFleet = R"(
time_scale: 0.001
factory:
  versions: [v1.13.2, v1.14.0]
  extensions:
    - {name: siderolabs/iscsi-tools}
    - {name: siderolabs/drbd, versions: [v1.13.2]}
clusters:
  - name: prod
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.14.0, kubernetes: 1.34.1}
      - {name: w-1, role: worker, talos: v1.13.2, kubernetes: 1.34.1}
      - {name: w-2, role: worker, talos: v1.13.2, kubernetes: 1.34.1,
         schematic: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}
)";

class FactoryGrpcTest : public testing::ProdFleetTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartProdFleet(kFleet, "sim-factory"));
    cosi_ = cosi::resource::State::NewStub(channel_);
  }

  // name -> version of the node's ExtensionStatuses, in id order.
  std::vector<std::pair<std::string, std::string>> Extensions(const std::string& node) {
    cosi::resource::ListRequest req;
    req.set_namespace_("runtime");
    req.set_type("ExtensionStatuses.runtime.talos.dev");
    auto ctx = Call(Addr(node));
    auto stream = cosi_->List(ctx.get(), req);
    std::vector<std::pair<std::string, std::string>> out;
    cosi::resource::ListResponse item;
    while (stream->Read(&item)) {
      YAML::Node spec = YAML::Load(item.resource().spec().yaml_spec());
      out.emplace_back(spec["metadata"]["name"].as<std::string>(),
                       spec["metadata"]["version"].as<std::string>());
    }
    EXPECT_TRUE(stream->Finish().ok());
    return out;
  }

  grpc::Status FactorySchematic(const std::string& node, YAML::Node* spec) {
    cosi::resource::GetRequest req;
    req.set_namespace_("runtime");
    req.set_type("ImageFactorySchematics.runtime.talos.dev");
    req.set_id("image-factory-schematic");
    cosi::resource::GetResponse resp;
    auto ctx = Call(Addr(node));
    grpc::Status st = cosi_->Get(ctx.get(), req, &resp);
    if (st.ok()) *spec = YAML::Load(resp.resource().spec().yaml_spec());
    return st;
  }

  std::string PostSchematic(const std::string& yaml) {
    httplib::Client client(fleet_->factory_url());
    auto res = client.Post("/schematics", yaml, "application/yaml");
    EXPECT_TRUE(res && res->status == 201);
    return res ? nlohmann::json::parse(res->body).value("id", "") : "";
  }

  grpc::Status Upgrade(const std::string& node, const std::string& image) {
    machine::UpgradeRequest req;
    req.set_image(image);
    machine::UpgradeResponse resp;
    auto ctx = Call(Addr(node));
    return machine_->Upgrade(ctx.get(), req, &resp);
  }

  std::string FactoryHost() { return fleet_->factory_url().substr(std::string("http://").size()); }

  std::unique_ptr<cosi::resource::State::Stub> cosi_;
};

TEST_F(FactoryGrpcTest, Vanilla114NodeRunsTheFactoryImageWithItsSchematic) {
  EXPECT_THAT(Extensions("cp-1"), ElementsAre(Pair("schematic", std::string(kVanillaSchematic))));
  YAML::Node spec;
  ASSERT_TRUE(FactorySchematic("cp-1", &spec).ok());
  EXPECT_EQ(spec["schematicId"].as<std::string>(), kVanillaSchematic);
  EXPECT_EQ(spec["flavor"].as<std::string>(), "Image Factory");
  EXPECT_EQ(spec["apiUrl"].as<std::string>(), "https://factory.talos.dev");
}

TEST_F(FactoryGrpcTest, Below114NoImageFactorySchematicResource) {
  // w-1 runs the vanilla ghcr.io installer: no extensions at all.
  EXPECT_TRUE(Extensions("w-1").empty());
  // w-2 runs a factory image: the schematic extension, but 1.13 does not define the type, and
  // apid's access policy refuses it before any lookup (internal/app/resources/access.go).
  EXPECT_THAT(Extensions("w-2"), ElementsAre(Pair("schematic", kCustom)));
  YAML::Node spec;
  const grpc::Status refused = FactorySchematic("w-2", &spec);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(refused.error_message(),
            "resource type \"ImageFactorySchematics.runtime.talos.dev\" is not supported");
}

TEST_F(FactoryGrpcTest, UpgradeToACustomSchematicShowsItsExtensions) {
  const std::string id = PostSchematic(
      "customization:\n  systemExtensions:\n    officialExtensions: [siderolabs/iscsi-tools]\n");
  ASSERT_EQ(id.size(), 64u);
  const std::string image = fmt::format("{}/metal-installer/{}:v1.14.0", FactoryHost(), id);
  ASSERT_TRUE(Upgrade("w-1", image).ok());
  ASSERT_TRUE(fleet_->WaitForNode(
                        "w-1",
                        [](const NodeSnapshot& n) {
                          return n.talos_tag == "v1.14.0" && n.ready && n.sequence.empty();
                        },
                        30s)
                  .ok());
  EXPECT_THAT(Extensions("w-1"),
              ElementsAre(Pair("iscsi-tools", "v1.14.0"), Pair("schematic", id)));
  YAML::Node spec;
  ASSERT_TRUE(FactorySchematic("w-1", &spec).ok());
  EXPECT_EQ(spec["schematicId"].as<std::string>(), id);
  EXPECT_EQ(spec["apiUrl"].as<std::string>(), fleet_->factory_url());
}

TEST_F(FactoryGrpcTest, LifecycleInstallOfAFactoryImageShowsItsExtensionsAfterTheReboot) {
  const std::string id = PostSchematic(
      "customization: {systemExtensions: {officialExtensions: [siderolabs/iscsi-tools]}}");
  const std::string image = fmt::format("{}/metal-installer/{}:v1.14.0", FactoryHost(), id);
  machine::ImageServicePullRequest pull;
  pull.mutable_containerd()->set_driver(common::CRI);
  pull.mutable_containerd()->set_namespace_(common::NS_SYSTEM);
  pull.set_image_ref(image);
  auto pull_ctx = Call(Addr("w-1"));
  auto pulling = machine::ImageService::NewStub(channel_)->Pull(pull_ctx.get(), pull);
  machine::ImageServicePullResponse pulled;
  while (pulling->Read(&pulled)) {
  }
  ASSERT_TRUE(pulling->Finish().ok());
  machine::LifecycleServiceUpgradeRequest req;
  *req.mutable_containerd() = pull.containerd();
  req.mutable_source()->set_image_name(image);
  auto ctx = Call(Addr("w-1"));
  auto stream = machine::LifecycleService::NewStub(channel_)->Upgrade(ctx.get(), req);
  machine::LifecycleServiceUpgradeResponse item;
  int exit_code = -1;
  while (stream->Read(&item)) {
    if (item.progress().has_exit_code()) exit_code = item.progress().exit_code();
  }
  ASSERT_TRUE(stream->Finish().ok());
  ASSERT_EQ(exit_code, 0);
  EXPECT_TRUE(Extensions("w-1").empty());  // installed, not yet booted
  machine::RebootResponse rebooted;
  auto reboot_ctx = Call(Addr("w-1"));
  ASSERT_TRUE(machine_->Reboot(reboot_ctx.get(), {}, &rebooted).ok());
  ASSERT_TRUE(fleet_->WaitForNode(
                        "w-1",
                        [](const NodeSnapshot& n) { return n.ready && n.talos_tag == "v1.14.0"; },
                        30s)
                  .ok());
  EXPECT_THAT(Extensions("w-1"),
              ElementsAre(Pair("iscsi-tools", "v1.14.0"), Pair("schematic", id)));
}

TEST_F(FactoryGrpcTest, NonFactoryInstallerLeavesNoSchematic) {
  ASSERT_TRUE(Upgrade("w-2", "ghcr.io/siderolabs/installer:v1.13.2").ok());
  ASSERT_TRUE(fleet_->WaitForNode(
                        "w-2", [](const NodeSnapshot& n) { return n.boots == 2 && n.ready; }, 30s)
                  .ok());
  EXPECT_TRUE(Extensions("w-2").empty());
}

TEST_F(FactoryGrpcTest, InstallersTheFactoryDoesNotBuildAreRefused) {
  const std::string drbd = PostSchematic(
      "customization: {systemExtensions: {officialExtensions: [siderolabs/drbd]}}");
  for (const std::string& image : {
           // a schematic nobody posted
           fmt::format("{}/metal-installer/{}:v1.14.0", FactoryHost(), std::string(64, 'b')),
           // a version the factory does not list
           fmt::format("{}/metal-installer/{}:v1.14.9", FactoryHost(), kVanillaSchematic),
           // an extension not published for that version
           fmt::format("{}/metal-installer/{}:v1.14.0", FactoryHost(), drbd),
           // the same holds for factory.talos.dev once the fleet file lists the versions
           fmt::format("factory.talos.dev/metal-installer/{}:v1.14.9", kVanillaSchematic),
       }) {
    grpc::Status st = Upgrade("w-1", image);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNKNOWN) << image;
    EXPECT_THAT(st.error_message(), HasSubstr("error validating installer image")) << image;
  }
  // A release added at run time is built.
  fleet_->factory().AddVersion("v1.14.9");
  EXPECT_TRUE(
      Upgrade("w-1", fmt::format("{}/metal-installer/{}:v1.14.9", FactoryHost(), kVanillaSchematic))
          .ok());
}

}  // namespace
}  // namespace tr::sim
