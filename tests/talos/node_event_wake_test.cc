// NodeEventWake against the in-process simulator over mutual TLS (and a scripted client, for
// which stream says what): a followed node's events wake
// its cluster, across the node's reboot, and a node no longer followed wakes nothing.
#include "reconciler/loop/node_event_wake.h"

#include <gtest/gtest.h>

#include <atomic>

#include "tests/support/sim_fixture.h"
#include "tests/support/wait.h"
#include "tests/talos/scripted_client.h"

namespace tr::reconciler::talos {
namespace {

// The clusters woken, in order; a test waits on the wakes themselves.
class Wakes {
 public:
  void Add(const std::string& cluster) {
    clusters_.Change([&](std::vector<std::string>& clusters) { clusters.push_back(cluster); });
  }
  std::vector<std::string> clusters() const { return clusters_.Get(); }
  size_t size() const { return clusters().size(); }
  // True once there were more than `n` wakes (30 s at most).
  bool WaitMoreThan(size_t n) const {
    return clusters_.WaitFor([n](const std::vector<std::string>& c) { return c.size() > n; });
  }

 private:
  test_support::Watched<std::vector<std::string>> clusters_;
};

class NodeEventWakeTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("1.11.6", "1.11.6")));
    std::unique_ptr<TalosClient> client;
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client));
    talos_ = std::move(client);
    profile_.name = "prod";
    profile_.nodes.push_back({"cp-1", Address("cp-1"), core::NodeRole::kControlPlane});
    profile_.nodes.push_back({"w-1", Address("w-1"), core::NodeRole::kWorker});
  }

  NodeEventWakeOptions Options() {
    NodeEventWakeOptions options;
    options.initial_backoff = std::chrono::milliseconds(5);
    options.max_backoff = std::chrono::milliseconds(50);
    return options;
  }

  // Upgrades `node`, which goes down for its reboot and never comes back.
  void UpgradeIntoARebootWithNoReturn(const std::string& node) {
    sim::Fault never_returns;
    never_returns.kind = sim::FaultKind::kNeverReturns;
    ASSERT_TRUE(fleet_->InjectFault(node, never_returns).ok());
    LegacyUpgradeRequest request;
    request.image = "ghcr.io/siderolabs/installer:v1.12.4";
    ASSERT_TRUE(talos_->Upgrade(Address(node), request).ok());
  }

  // A follower whose longest wait (400 ms) is far from its shortest (5 ms), and its wakes.
  struct SlowToProbe {
    SlowToProbe(std::shared_ptr<TalosClient> talos, Env& env, NodeEventWakeOptions options)
        : clients(std::move(talos)),
          follower(
              clients, [this](const std::string& cluster) { wakes.Add(cluster); }, env, options) {}
    FixedClusterClients clients;
    Wakes wakes;
    NodeEventWake follower;  // last: it wakes through the others
  };
  std::unique_ptr<SlowToProbe> FollowSlowToProbe() {
    NodeEventWakeOptions options = Options();
    options.max_backoff = std::chrono::milliseconds(400);
    return std::make_unique<SlowToProbe>(talos_, env_, options);
  }

  std::shared_ptr<TalosClient> talos_;
  core::ClusterProfile profile_;
};

// Every probe after the first waited at least half the longest wait (its jitter).
void ExpectEachProbeAfterHalfTheLongestWait(
    const std::vector<std::chrono::system_clock::time_point>& t) {
  for (size_t i = 1; i < t.size(); ++i) {
    EXPECT_GE(t[i] - t[i - 1], std::chrono::milliseconds(200)) << "subscription " << i;
  }
}

TEST_F(NodeEventWakeTest, AFollowedNodeWakesItsClusterAcrossItsRebootAndNothingOnceDropped) {
  FixedClusterClients clients(talos_);
  Wakes wakes;
  NodeEventWake follower(
      clients, [&](const std::string& cluster) { wakes.Add(cluster); }, env_, Options());
  follower.Follow(profile_, {"w-1"});
  EXPECT_EQ(follower.Following(), 1u);
  // The stream is live: that wakes the cluster once.
  ASSERT_TRUE(wakes.WaitMoreThan(0));

  const size_t before = wakes.size();
  absl::StatusOr<FollowResult> upgraded =
      FollowLegacyUpgrade(*talos_, Address("w-1"), "ghcr.io/siderolabs/installer:v1.12.4");
  ASSERT_TRUE(upgraded.ok()) << upgraded.status();
  // The first stream ended when the node went down; the one opened after the reboot wakes the
  // cluster (once live, and at the node ready if it was not yet).
  ASSERT_TRUE(wakes.WaitMoreThan(before)) << "no wake";
  // Any wake from here on needs a stream opened after that reboot.
  const size_t rebooted = wakes.size();
  upgraded = FollowLegacyUpgrade(*talos_, Address("w-1"), "ghcr.io/siderolabs/installer:v1.12.5");
  ASSERT_TRUE(upgraded.ok()) << upgraded.status();
  ASSERT_TRUE(wakes.WaitMoreThan(rebooted)) << "no wake after the first reboot";
  for (const std::string& cluster : wakes.clusters()) EXPECT_EQ(cluster, "prod");

  follower.Follow(profile_, {});
  EXPECT_EQ(follower.Following(), 0u);
  const size_t dropped = wakes.size();
  upgraded = FollowLegacyUpgrade(*talos_, Address("w-1"), "ghcr.io/siderolabs/installer:v1.12.6");
  ASSERT_TRUE(upgraded.ok()) << upgraded.status();
  EXPECT_EQ(wakes.size(), dropped) << "a node no longer followed woke its cluster";
}

// A node is heard (its cluster may poll it less often) while its stream is live, and while it
// is down and subscribed to again; the live stream's end wakes its cluster.
TEST_F(NodeEventWakeTest, ANodeIsHeardWhileItsStreamIsLiveAndWhileItIsDown) {
  FixedClusterClients clients(talos_);
  Wakes wakes;
  NodeEventWake follower(
      clients, [&](const std::string& cluster) { wakes.Add(cluster); }, env_, Options());
  EXPECT_FALSE(follower.Hearing("prod", {"w-1"})) << "heard before it was followed";
  follower.Follow(profile_, {"w-1"});
  // The hello of the live stream wakes the cluster, once the node is heard.
  ASSERT_TRUE(wakes.WaitMoreThan(0));
  EXPECT_TRUE(follower.Hearing("prod", {"w-1"}));
  EXPECT_FALSE(follower.Hearing("prod", {"w-1", "cp-1"})) << "cp-1 is not followed";
  EXPECT_FALSE(follower.Hearing("prod", {}));
  EXPECT_FALSE(follower.Hearing("staging", {"w-1"}));

  const size_t live = wakes.size();
  ASSERT_NO_FATAL_FAILURE(UpgradeIntoARebootWithNoReturn("w-1"));
  ASSERT_TRUE(wakes.WaitMoreThan(live)) << "the stream's end woke nothing";
  const auto failed_subscriptions = [&] {
    size_t n = 0;
    for (const sim::JournalEntry& e : fleet_->journal().Entries()) {
      n += e.what == "/machine.MachineService/Events" && e.code == "UNAVAILABLE";
    }
    return n;
  };
  // The simulator's journal shows the node's refusals: nothing of the test's own does.
  ASSERT_TRUE(test_support::WaitUntil([&] { return failed_subscriptions() >= 3; }));
  EXPECT_TRUE(follower.Hearing("prod", {"w-1"})) << "a node down and subscribed to is heard";

  follower.Forget("prod");
  EXPECT_FALSE(follower.Hearing("prod", {"w-1"}));
}

// A node that said it is going down (REBOOTING, before its kexec) is not probed on the short
// waits: every subscription while it is down waits at least half the longest (its jitter).
TEST_F(NodeEventWakeTest, ANodeThatSaidItIsGoingDownIsProbedOnlyAfterTheLongestWait) {
  std::unique_ptr<SlowToProbe> slow = FollowSlowToProbe();
  slow->follower.Follow(profile_, {"w-1"});
  ASSERT_TRUE(slow->wakes.WaitMoreThan(0));

  ASSERT_NO_FATAL_FAILURE(UpgradeIntoARebootWithNoReturn("w-1"));
  // When the node went down, then each subscription refused after it.
  const auto times = [&] {
    std::vector<std::chrono::system_clock::time_point> t;
    for (const sim::JournalEntry& e : fleet_->journal().Entries()) {
      const bool down =
          e.kind == sim::JournalEntry::Kind::kState && e.node == "w-1" && e.what == "down";
      // Answered by the endpoint, which cannot dial the node (the stream the reboot broke is
      // the node's own answer).
      const bool refused =
          e.what == "/machine.MachineService/Events" && e.code == "UNAVAILABLE" && e.node != "w-1";
      if ((down && t.empty()) || (refused && !t.empty())) t.push_back(e.time);
    }
    return t;
  };
  ASSERT_TRUE(test_support::WaitUntil([&] { return times().size() >= 3; }));
  ExpectEachProbeAfterHalfTheLongestWait(times());
  slow->follower.Forget("prod");
}

// A node already down when its follow starts (the rollout hands over a node read from its
// watch once it fell) is not probed on the short waits either.
TEST_F(NodeEventWakeTest, ANodeDownFromItsFollowsStartIsProbedOnlyAfterTheLongestWait) {
  ASSERT_NO_FATAL_FAILURE(UpgradeIntoARebootWithNoReturn("w-1"));
  const auto went_down = [&] {
    for (const sim::JournalEntry& e : fleet_->journal().Entries()) {
      if (e.kind == sim::JournalEntry::Kind::kState && e.node == "w-1" && e.what == "down") {
        return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(test_support::WaitUntil(went_down));
  const size_t before = fleet_->journal().Entries().size();

  std::unique_ptr<SlowToProbe> slow = FollowSlowToProbe();
  slow->follower.Follow(profile_, {"w-1"});
  // Each subscription the endpoint refused, since the follow started.
  const auto refused = [&] {
    std::vector<std::chrono::system_clock::time_point> t;
    const std::vector<sim::JournalEntry> entries = fleet_->journal().Entries();
    for (size_t i = before; i < entries.size(); ++i) {
      if (entries[i].what == "/machine.MachineService/Events" && entries[i].code == "UNAVAILABLE") {
        t.push_back(entries[i].time);
      }
    }
    return t;
  };
  ASSERT_TRUE(test_support::WaitUntil([&] { return refused().size() >= 3; }));
  EXPECT_TRUE(slow->follower.Hearing("prod", {"w-1"})) << "a node down and subscribed to is heard";
  ExpectEachProbeAfterHalfTheLongestWait(refused());
  EXPECT_EQ(slow->wakes.size(), 0u) << "a stream never live woke its cluster";
  slow->follower.Forget("prod");
}

TEST(NodeEventWakeEventsTest, OnlyTheEndOfAWaitAFailureOrANewStreamWakesTheCluster) {
  auto event = [](EventPayload payload) { return MachineEvent{"id", "actor", std::move(payload)}; };
  auto status = [](core::MachineStage stage, bool ready) {
    MachineStatus s;
    s.stage = stage;
    s.ready = ready;
    return MachineStatusEvent{s};
  };
  EXPECT_TRUE(WakesCluster(event(HelloEvent{})));
  EXPECT_TRUE(WakesCluster(event(status(core::MachineStage::kRunning, true))));
  EXPECT_FALSE(WakesCluster(event(status(core::MachineStage::kRunning, false))));
  EXPECT_FALSE(WakesCluster(event(status(core::MachineStage::kRebooting, false))));
  EXPECT_FALSE(WakesCluster(event(status(core::MachineStage::kUpgrading, false))));
  SequenceEvent failed{"upgrade", SequenceAction::kStop, ErrorCode::kFatal, "install failed"};
  EXPECT_TRUE(WakesCluster(event(failed)));
  EXPECT_FALSE(WakesCluster(event(SequenceEvent{"upgrade", SequenceAction::kStart, {}, ""})));
  EXPECT_FALSE(WakesCluster(event(PhaseEvent{"install", PhaseAction::kStart})));
}

// A follow's first stream asks for the node's new events and its hello wakes the cluster; a
// stream opened again after a break replays what the node buffered (tail_events -1, as talosctl
// resubscribes), so its hello wakes nothing and a replayed RUNNING and ready does. Played by a
// scripted client: which stream says what, and when, is the test's.
TEST(NodeEventWakeReplayTest, AStreamOpenedAgainReplaysTheNodesBufferAndItsHelloWakesNothing) {
  using core::MachineStage;
  auto client = std::make_shared<ScriptedClient>();
  FixedClusterClients clients(client);
  std::atomic<int> wakes = 0;
  NodeEventWake follower(
      clients, [&](const std::string&) { ++wakes; }, Env::Default(),
      NodeEventWakeOptions{std::chrono::milliseconds(5), std::chrono::milliseconds(20)});
  core::ClusterProfile profile;
  profile.name = "prod";
  profile.nodes.push_back({"w-1", "10.5.0.3", core::NodeRole::kWorker});
  auto event = [](EventPayload payload) { return MachineEvent{"id", "", std::move(payload)}; };
  auto status = [&](MachineStage stage, bool ready) {
    MachineStatus s;
    s.stage = stage;
    s.ready = ready;
    return event(MachineStatusEvent{s});
  };
  follower.Follow(profile, {"w-1"});

  auto [first_request, first] = client->EventStream(0);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first_request.tail_events, 0);
  first->Deliver(event(HelloEvent{}));
  EXPECT_EQ(wakes, 1) << "the first stream's hello";
  first->Deliver(status(MachineStage::kRebooting, true));
  first->End(absl::UnavailableError("the node went down"));
  EXPECT_EQ(wakes, 2) << "the live stream's break";

  auto [again_request, again] = client->EventStream(1);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again_request.tail_events, -1);
  again->Deliver(event(HelloEvent{}));
  again->Deliver(status(MachineStage::kBooting, false));
  again->Deliver(status(MachineStage::kRunning, false));
  EXPECT_EQ(wakes, 2) << "the hello or the stages of a stream opened again";
  again->Deliver(status(MachineStage::kRunning, true));
  EXPECT_EQ(wakes, 3) << "the node ready, replayed or new";
  follower.Forget("prod");
}

TEST_F(NodeEventWakeTest, FollowsTheNodesOfTheProfileAndForgetsACluster) {
  FixedClusterClients clients(talos_);
  Wakes wakes;
  NodeEventWake follower(
      clients, [&](const std::string& cluster) { wakes.Add(cluster); }, env_, Options());
  follower.Follow(profile_, {"cp-1", "w-1", "not-a-node"});
  EXPECT_EQ(follower.Following(), 2u) << "a name the profile does not have is not followed";
  follower.Follow(profile_, {"w-1"});
  EXPECT_EQ(follower.Following(), 1u);
  EXPECT_TRUE(follower.IsFollowing("prod", "w-1"));
  EXPECT_FALSE(follower.IsFollowing("prod", "cp-1"));
  EXPECT_FALSE(follower.IsFollowing("staging", "w-1"));
  follower.Forget("prod");
  EXPECT_EQ(follower.Following(), 0u);
  EXPECT_FALSE(follower.Hearing("prod", {"w-1"}));
  EXPECT_FALSE(follower.IsFollowing("prod", "w-1"));
  follower.Follow(profile_, {"w-1"});
  EXPECT_EQ(follower.Following(), 1u);
}

// A node that is down is probed at least as often as the poll of a node it hears would look
// (five node polls), and never more often than the defaults: with the daemon's default poll the
// defaults hold.
TEST(NodeEventWakeOptionsTest, ANodeDownIsProbedWithinTheHeardPollAndNoMoreOftenThanTheDefaults) {
  using std::chrono::milliseconds;
  const NodeEventWakeOptions defaults;
  const NodeEventWakeOptions slow = NodeEventWakeOptionsFor(milliseconds(5000));
  EXPECT_EQ(slow.max_backoff, defaults.max_backoff);
  EXPECT_EQ(slow.initial_backoff, defaults.initial_backoff);
  const NodeEventWakeOptions fast = NodeEventWakeOptionsFor(milliseconds(200));
  EXPECT_EQ(fast.max_backoff, milliseconds(200) * core::kHeardPollFactor);
  EXPECT_EQ(fast.initial_backoff, defaults.initial_backoff);
  const NodeEventWakeOptions tiny = NodeEventWakeOptionsFor(milliseconds(10));
  EXPECT_EQ(tiny.max_backoff, milliseconds(10) * core::kHeardPollFactor);
  EXPECT_EQ(tiny.initial_backoff, tiny.max_backoff);
}

}  // namespace
}  // namespace tr::reconciler::talos
