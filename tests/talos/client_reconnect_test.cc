// The client across a reboot when apid on the endpoints is slow to reconnect to the rebooted
// node (its backoff is up to 15 s in Talos, its connect timeout 20 s): forwarded calls stay
// Unavailable, or hang, after the node is back; the client's deadlines turn a hang into
// DeadlineExceeded (retry), and following the node still ends RUNNING and ready on the new
// version.
#include <gmock/gmock.h>

#include "tests/support/sim_fixture.h"
#include "tests/support/wait.h"

namespace tr::reconciler::talos {
namespace {

using namespace std::chrono_literals;

class ClientReconnectTest : public SimTest {
 protected:
  // Calls journaled after the last boot of w-1 (its last "up") that `match`.
  int CallsAfterTheLastBoot(const std::function<bool(const sim::JournalEntry&)>& match) {
    int count = 0;
    for (const auto& entry : fleet_->journal().Entries()) {
      if (entry.kind == sim::JournalEntry::Kind::kState && entry.node == "w-1" &&
          entry.what == "up") {
        count = 0;
      }
      count += entry.kind == sim::JournalEntry::Kind::kCall && match(entry);
    }
    return count;
  }
};

TEST_F(ClientReconnectTest, FollowingANodeToleratesApidReconnectBackoff) {
  // apid_reconnect of 1000 s fleet time is one real second at this scale.
  ASSERT_NO_FATAL_FAILURE(
      StartFleet(ThreeNodeFleet("v1.11.6", "v1.11.6", "{apid_reconnect: 1000s}")));
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
  const int refused_after_up = CallsAfterTheLastBoot([&](const sim::JournalEntry& entry) {
    return entry.code == "UNAVAILABLE" && entry.node != "w-1" &&
           entry.detail.find(node + ":50000") != std::string::npos;
  });
  EXPECT_GT(refused_after_up, 0);
}

TEST_F(ClientReconnectTest, HangingForwardedCallsEndAtTheDeadlineAndTheFollowGetsThrough) {
  // apid_hang of 2000 s fleet time is two real seconds at this scale: forwarded calls to a node
  // that just booted are accepted and not answered for that long.
  ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.11.6", "v1.11.6", "{apid_hang: 2000s}")));
  TalosContext context;
  ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
  GrpcTalosClientOptions options = TestClientOptions();
  options.timeouts.read = std::chrono::milliseconds(200);
  auto made = NewGrpcTalosClient(context, Env::Default(), options);
  ASSERT_TRUE(made.ok()) << made.status();
  std::unique_ptr<TalosClient> client = *std::move(made);
  const std::string node = Address("w-1");

  ASSERT_TRUE(client->Reboot(node, RebootMode::kDefault).ok());
  ASSERT_TRUE(fleet_
                  ->WaitForNode(
                      "w-1", [](const sim::NodeSnapshot& n) { return n.boots == 2; }, 20s)
                  .ok());
  // Every endpoint's apid hangs towards w-1: the read's own deadline ends it, a retryable code.
  auto hung = client->Version(node);
  EXPECT_EQ(hung.status().code(), absl::StatusCode::kDeadlineExceeded) << hung.status();
  // Retried, it gets through once the window is over.
  ASSERT_TRUE(test_support::WaitUntil(
      [&] {
        if (!hung.ok()) hung = client->Version(node);
        return hung.ok();
      },
      30s))
      << hung.status();

  // Following an upgrade across the next boot: the event stream hangs until apid's connection
  // attempt times out, then the follower subscribes again and sees the node ready.
  FollowResult result;
  TR_ASSERT_OK_AND_ASSIGN(
      result, FollowLegacyUpgrade(*client, node, "ghcr.io/siderolabs/installer:v1.12.4"));
  EXPECT_TRUE(result.status.RunningAndReady());
  const int timed_out_after_up = CallsAfterTheLastBoot([&](const sim::JournalEntry& entry) {
    return entry.code == "UNAVAILABLE" &&
           entry.detail.find(node + ":50000: i/o timeout") != std::string::npos;
  });
  EXPECT_GT(timed_out_after_up, 0);
  NodeVersion version;
  TR_ASSERT_OK_AND_ASSIGN(version, client->Version(node));
  EXPECT_EQ(version.tag, "v1.12.4");
}

}  // namespace
}  // namespace tr::reconciler::talos
