// The real gRPC Talos client against talos-sim: RBAC by the client certificate's role, apid's
// forwarding rules, and the events follower across a plain reboot.
#include <gmock/gmock.h>

#include "tests/support/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;

class ClientAccessTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.11.6", "v1.11.6")));
  }
  // Reboots cp-3 and follows its events until it is back RUNNING and ready.
  void FollowAcrossAReboot();
};

TEST_F(ClientAccessTest, ReaderCertificateIsPermissionDeniedForChanges) {
  std::unique_ptr<TalosClient> reader;
  ASSERT_NO_FATAL_FAILURE(NewClient("prod", &reader, "os:reader"));
  EXPECT_TRUE(reader->Version(Address("cp-2")).ok());
  EXPECT_TRUE(reader->EtcdMemberList(Address("cp-2")).ok());
  LegacyUpgradeRequest request;
  request.image = "ghcr.io/siderolabs/installer:v1.12.4";
  auto ack = reader->Upgrade(Address("cp-2"), request);
  EXPECT_EQ(ack.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(ack.status().message()),
              HasSubstr(fmt::format("talos Upgrade on node {}", Address("cp-2"))));
  EXPECT_EQ(reader->BootId(Address("cp-2")).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(reader->Reboot(Address("w-1"), RebootMode::kDefault).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(reader->CosiGet(Address("w-1"), "config", "MachineConfigs.config.talos.dev", "v1alpha1")
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Snapshot("cp-2").talos_tag, "v1.11.6");
}

TEST_F(ClientAccessTest, WorkerEndpointRefusesForwarding) {
  TalosContext context;
  ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
  context.endpoints = {Endpoint{Address("w-1"), kApidPort}};
  std::unique_ptr<TalosClient> client;
  ASSERT_NO_FATAL_FAILURE(NewClientFor(context, &client));
  auto version = client->Version(Address("cp-1"));
  EXPECT_EQ(version.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(version.status().message()), HasSubstr("no request forwarding"));
  // The worker serves calls for itself.
  EXPECT_TRUE(client->Version(Address("w-1")).ok());
}

TEST_F(ClientAccessTest, EventsFollowerAcrossAReboot) {
  ASSERT_NO_FATAL_FAILURE(FollowAcrossAReboot());
}

TEST_F(ClientAccessTest, EventsFollowerAcrossARebootWhenTheNodeRefusesConnections) {
  fleet_.reset();
  ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.11.6", "v1.11.6"), true));
  ASSERT_NO_FATAL_FAILURE(FollowAcrossAReboot());
}

void ClientAccessTest::FollowAcrossAReboot() {
  std::unique_ptr<TalosClient> client;
  ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client));
  const std::string node = Address("cp-3");
  std::string before;
  TR_ASSERT_OK_AND_ASSIGN(before, client->BootId(node));
  EventsFollower follower(*client, env_);
  FollowOptions options = Follow([&] { return client->Reboot(node, RebootMode::kDefault); });
  options.boot_id_before = before;
  std::vector<core::MachineStage> stages;
  options.on_event = [&](const MachineEvent& e) {
    if (const auto* m = std::get_if<MachineStatusEvent>(&e.payload)) {
      stages.push_back(m->status.stage);
    }
  };
  FollowResult result;
  TR_ASSERT_OK_AND_ASSIGN(result, follower.FollowUntilReady(node, options, {}));
  EXPECT_NE(result.boot_id, before);
  EXPECT_EQ(result.boot_id, Snapshot("cp-3").boot_id);
  EXPECT_GE(result.subscriptions, 2);
  ASSERT_FALSE(stages.empty());
  EXPECT_EQ(stages.back(), core::MachineStage::kRunning);
  EXPECT_NE(std::find(stages.begin(), stages.end(), core::MachineStage::kBooting), stages.end());
}

}  // namespace
}  // namespace tr::reconciler::talos
