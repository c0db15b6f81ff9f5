// The client across a reboot when apid on the endpoints is slow to reconnect to the rebooted
// node (its backoff is up to 15 s in Talos): forwarded calls stay Unavailable after the node is
// back, and following the node still ends RUNNING and ready on the new version.
#include <gmock/gmock.h>

#include "tests/talos/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

// apid_reconnect of 1000 s fleet time is one real second at this scale.
constexpr char kFleet[] = R"(
time_scale: 0.001
timings: {apid_reconnect: 1000s}
clusters:
  - name: prod
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: cp-2, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: cp-3, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: w-1, role: worker, talos: v1.11.6, kubernetes: 1.34.1}
)";

class ClientReconnectTest : public SimTest {};

TEST_F(ClientReconnectTest, FollowingANodeToleratesApidReconnectBackoff) {
  ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet));
  std::unique_ptr<TalosClient> client;
  ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client));
  const std::string node = Address("w-1");
  FollowResult result;
  TR_ASSERT_OK_AND_ASSIGN(
      result, FollowLegacyUpgrade(*client, node, "ghcr.io/siderolabs/installer:v1.12.4"));
  EXPECT_TRUE(result.status.RunningAndReady());
  NodeVersion version;
  TR_ASSERT_OK_AND_ASSIGN(version, client->Version(node));
  EXPECT_EQ(version.tag, "v1.12.4");
  // Calls for the node were refused by the endpoints after its last boot (journal "up").
  uint64_t up = 0;
  int refused_after_up = 0;
  for (const auto& entry : fleet_->journal().Entries()) {
    if (entry.kind == sim::JournalEntry::Kind::kState && entry.node == "w-1" &&
        entry.what == "up") {
      up = entry.seq;
      refused_after_up = 0;
    }
    refused_after_up += up != 0 && entry.kind == sim::JournalEntry::Kind::kCall &&
                        entry.code == "UNAVAILABLE" && entry.node != "w-1" &&
                        entry.detail.find(node + ":50000") != std::string::npos;
  }
  EXPECT_GT(refused_after_up, 0);
}

}  // namespace
}  // namespace tr::reconciler::talos
