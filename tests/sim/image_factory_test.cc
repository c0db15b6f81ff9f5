// The simulated Image Factory over real HTTP on 127.0.0.1: schematics, versions, official
// extensions, the factory's error codes, and its faults (500, hang, delay on a manual clock).
#include "tests/sim/catalog/image_factory_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <future>

#include "nlohmann/json.hpp"
#include "tests/sim/catalog/image_registry.h"

namespace tr::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;
using namespace std::chrono_literals;

struct Answer {
  int status = 0;  // 0: no answer (the client's deadline)
  std::string body;
};

class ImageFactoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FactorySpec spec;
    spec.versions = {"v1.13.9", "v1.14.0"};
    spec.extensions = {{"siderolabs/iscsi-tools", {}}, {"siderolabs/drbd", {"v1.14.0"}}};
    factory_ = std::make_shared<ImageFactory>(spec, std::vector<std::string>{},
                                              std::set<std::string>{});
    auto server = ImageFactoryServer::Start(factory_, scheduler_, 1.0);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  void TearDown() override {
    server_->Stop();
    scheduler_->Stop();
  }

  Answer Send(const std::string& method, const std::string& path, const std::string& body = "",
              std::chrono::seconds timeout = 10s) {
    httplib::Client client(server_->url());
    client.set_read_timeout(timeout);
    auto res = method == "POST" ? client.Post(path, body, "application/yaml") : client.Get(path);
    if (!res) return {};
    return {res->status, res->body};
  }

  std::shared_ptr<ManualScheduler> scheduler_ = std::make_shared<ManualScheduler>();
  std::shared_ptr<ImageFactory> factory_;
  std::unique_ptr<ImageFactoryServer> server_;
};

TEST_F(ImageFactoryTest, PostingTheEmptySchematicAnswersTheVanillaId) {
  Answer a = Send("POST", "/schematics", "customization: {}\n");
  ASSERT_EQ(a.status, 201) << a.body;
  EXPECT_EQ(json::parse(a.body)["id"], std::string(kVanillaSchematic));
  EXPECT_EQ(json::parse(a.body)["schematic"], "customization: {}\n");
}

TEST_F(ImageFactoryTest, PostedSchematicIsKnownUnderItsId) {
  const std::string yaml =
      "customization:\n  systemExtensions:\n    officialExtensions: [siderolabs/iscsi-tools]\n";
  Answer a = Send("POST", "/schematics", yaml);
  ASSERT_EQ(a.status, 201) << a.body;
  const std::string id = json::parse(a.body)["id"];
  EXPECT_EQ(id, SchematicId(*ParseSchematic(yaml)));
  EXPECT_TRUE(factory_->Knows(id));
  // The same schematic written otherwise: the same ID.
  Answer again = Send("POST", "/schematics",
                      R"({"customization":{"systemExtensions":{"officialExtensions":)"
                      R"(["siderolabs/iscsi-tools"]}}})");
  EXPECT_EQ(json::parse(again.body)["id"], id);
}

TEST_F(ImageFactoryTest, InvalidSchematicsAre400) {
  for (const char* bad : {"customization: {extraKernelArg: [x]}", "customization: [", "owner: x"}) {
    Answer a = Send("POST", "/schematics", bad);
    EXPECT_EQ(a.status, 400) << bad;
    EXPECT_FALSE(a.body.empty()) << bad;
  }
}

TEST_F(ImageFactoryTest, UnknownExtensionsAreAcceptedAtPostTime) {
  // The factory checks extensions when it builds an image, not when it stores the schematic.
  Answer a = Send("POST", "/schematics",
                  "customization: {systemExtensions: {officialExtensions: [acme/nope]}}");
  ASSERT_EQ(a.status, 201);
  const std::string id = json::parse(a.body)["id"];
  auto layers = factory_->ImageExtensions(id, "v1.14.0", server_->url());
  EXPECT_EQ(layers.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(ImageFactoryTest, VersionsListsTheReleasesOldestFirst) {
  factory_->AddVersion("v1.14.1");
  factory_->AddVersion("v1.13.10");
  Answer a = Send("GET", "/versions");
  ASSERT_EQ(a.status, 200);
  EXPECT_THAT(json::parse(a.body).get<std::vector<std::string>>(),
              ElementsAre("v1.13.9", "v1.13.10", "v1.14.0", "v1.14.1"));
}

// image-factory internal/frontend/http/meta.go and internal/artifacts/versions.go: a broken
// release leaves /versions, is listed at /versions?broken=true, and is no longer built.
TEST_F(ImageFactoryTest, ABrokenReleaseMovesToTheBrokenListAndIsNoLongerBuilt) {
  EXPECT_EQ(json::parse(Send("GET", "/versions?broken=true").body), json::array());
  const std::string image = factory_->host() + "/metal-installer/" +
                            SchematicId(Schematic{}) + ":v1.14.0";
  const RegistryCatalog registry({}, {}, factory_);
  ASSERT_TRUE(registry.Exists(*ParseImageRef(image)));
  factory_->MarkBroken("v1.14.0");
  factory_->AddVersion("v1.14.0");  // a new listing does not bring it back
  EXPECT_THAT(json::parse(Send("GET", "/versions").body).get<std::vector<std::string>>(),
              ElementsAre("v1.13.9"));
  EXPECT_THAT(
      json::parse(Send("GET", "/versions?broken=true").body).get<std::vector<std::string>>(),
      ElementsAre("v1.14.0"));
  // Only the value "true" asks for the broken list.
  EXPECT_THAT(json::parse(Send("GET", "/versions?broken=1").body).get<std::vector<std::string>>(),
              ElementsAre("v1.13.9"));
  EXPECT_FALSE(registry.Exists(*ParseImageRef(image)));
  EXPECT_FALSE(registry.Exists(*ParseImageRef("factory.talos.dev/metal-installer/" +
                                              SchematicId(Schematic{}) + ":v1.14.0")));
}

TEST_F(ImageFactoryTest, OfficialExtensionsPerVersion) {
  Answer a = Send("GET", "/version/v1.14.0/extensions/official");
  ASSERT_EQ(a.status, 200);
  json list = json::parse(a.body);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["name"], "siderolabs/iscsi-tools");
  EXPECT_EQ(list[0]["ref"], "ghcr.io/siderolabs/iscsi-tools:v1.14.0");
  EXPECT_THAT(list[0]["digest"].get<std::string>(), ::testing::StartsWith("sha256:"));
  EXPECT_EQ(list[0]["author"], "Sidero Labs");
  EXPECT_EQ(list[1]["name"], "siderolabs/drbd");
  // drbd is published for 1.14.0 only.
  Answer older = Send("GET", "/version/1.13.9/extensions/official");
  ASSERT_EQ(older.status, 200);
  EXPECT_EQ(json::parse(older.body).size(), 1u);
}

TEST_F(ImageFactoryTest, UnknownVersionIs404AndNonSemverIs500) {
  EXPECT_EQ(Send("GET", "/version/v1.99.0/extensions/official").status, 404);
  EXPECT_EQ(Send("GET", "/version/latest/extensions/official").status, 500);
}

TEST_F(ImageFactoryTest, InternalErrorFault) {
  server_->set_faults({.internal_error = true, .hang = false, .delay = {}});
  Answer a = Send("GET", "/versions");
  EXPECT_EQ(a.status, 500);
  EXPECT_EQ(a.body, "internal server error\n");
  server_->set_faults({});
  EXPECT_EQ(Send("GET", "/versions").status, 200);
}

TEST_F(ImageFactoryTest, HangHoldsRequestsUntilCleared) {
  server_->set_faults({.internal_error = false, .hang = true, .delay = {}});
  // A client with a deadline gives up.
  EXPECT_EQ(Send("GET", "/versions", "", 1s).status, 0);
  auto pending = std::async(std::launch::async, [&] { return Send("GET", "/versions"); });
  ASSERT_TRUE(server_->WaitUntilHeld(1, 10s));
  EXPECT_EQ(pending.wait_for(0s), std::future_status::timeout);
  server_->set_faults({});
  EXPECT_EQ(pending.get().status, 200);
}

TEST_F(ImageFactoryTest, DelayRunsOnTheInjectedClock) {
  server_->set_faults({.internal_error = false, .hang = false, .delay = 5s});
  auto pending = std::async(std::launch::async, [&] { return Send("GET", "/versions"); });
  ASSERT_TRUE(server_->WaitUntilHeld(1, 10s));
  scheduler_->AdvanceBy(4s);
  EXPECT_EQ(pending.wait_for(0s), std::future_status::timeout);
  EXPECT_EQ(server_->held_requests(), 1);
  scheduler_->AdvanceBy(1s);
  EXPECT_EQ(pending.get().status, 200);
}

}  // namespace
}  // namespace tr::sim
