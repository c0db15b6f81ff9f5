// TalosFleetObserver watching the nodes of a cluster looked at often (node_watches.h), against
// the in-process simulator over mutual TLS: what a look still asks, counted in the simulator's
// journal, and that what it reads from the watches is what asking would have answered.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>

#include "reconciler/operations/observer.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/wait.h"

namespace tr::reconciler::talos {
namespace {

using test_support::WaitUntil;

constexpr char kRead[] = "/machine.MachineService/Read";  // the boot id
constexpr char kGet[] = "/cosi.resource.State/Get";       // MachineStatus
constexpr char kVersion[] = "/machine.MachineService/Version";
constexpr char kWatch[] = "/cosi.resource.State/Watch";

class ObserverWatchTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("1.11.6", "1.11.6", Timings())));
    std::unique_ptr<TalosClient> client;
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client));
    talos_ = std::move(client);
    profile_ = ThreeNodeProfile();
  }

  // The simulator's timings (ThreeNodeFleet), "" for its defaults.
  virtual std::string Timings() const { return ""; }

  size_t CallsTo(const std::string& method) {
    size_t n = 0;
    for (const char* node : {"cp-1", "cp-2", "cp-3", "w-1"}) n += Calls(node, method).size();
    return n;
  }

  core::ObservedCluster Look(TalosFleetObserver& observer) {
    absl::StatusOr<core::ObservedCluster> observed = observer.Observe(profile_);
    EXPECT_TRUE(observed.ok()) << observed.status();
    return observed.ok() ? *std::move(observed) : core::ObservedCluster{};
  }

  // Looks until every node's watch is live and knows its boot.
  void LookUntilWatched(TalosFleetObserver& observer) {
    Look(observer);  // the first look: asked, and the cluster not watched yet
    EXPECT_EQ(observer.WatchedNodes(), 0);
    Look(observer);  // the second within the minute starts the watches
    ASSERT_TRUE(WaitUntil([&] { return observer.WatchedNodes() == 4; }));
    Look(observer);  // reads nothing: the boot ids the second read are the watches' boots
  }

  // What the observer's watches call: counts the wakes of "prod".
  NodeWatches::Wake Waker() {
    return [this](const std::string& cluster) {
      if (cluster == "prod") wakes_.fetch_add(1);
    };
  }

  std::shared_ptr<TalosClient> talos_;
  core::ClusterProfile profile_;
  std::atomic<int> wakes_{0};
};

TEST_F(ObserverWatchTest, ALookAtAWatchedClusterAsksOnlyEtcdAndSeesWhatAskingWouldSee) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "", env_, Waker());
  ASSERT_NO_FATAL_FAILURE(LookUntilWatched(observer));
  const size_t reads = CallsTo(kRead);
  const size_t gets = CallsTo(kGet);
  // The first look asked each node's status and read each boot id after it; the second
  // started the watches and read their first statuses instead of asking, the same ones the
  // first had (the same `created`: the same boot), so it read no boot id.
  EXPECT_EQ(reads, 4u);
  EXPECT_EQ(gets, 4u);

  const size_t before = fleet_->journal().Entries().size();
  const core::ObservedCluster watched = Look(observer);
  const std::vector<sim::JournalEntry> entries = fleet_->journal().Entries();
  size_t asked = 0;
  size_t parts = 0;
  for (size_t i = before; i < entries.size(); ++i) {
    if (entries[i].kind != sim::JournalEntry::Kind::kCall) continue;
    (entries[i].detail.starts_with(sim::kFanoutPart) ? parts : asked) += 1;
    EXPECT_TRUE(entries[i].what == "/machine.MachineService/EtcdStatus" ||
                entries[i].what == "/machine.MachineService/EtcdMemberList")
        << entries[i].node << " " << entries[i].what;
  }
  // Each control plane's member status, in one call apid proxies to each (three parts); not the
  // member list, whose members the looks before read as voters (EtcdVoters).
  EXPECT_EQ(asked, 1u);
  EXPECT_EQ(parts, 3u);
  EXPECT_EQ(CallsTo(kRead), reads);
  EXPECT_EQ(CallsTo(kGet), gets);

  TalosFleetObserver asking(clients, "");
  const core::ObservedCluster polled = Look(asking);
  ASSERT_EQ(watched.nodes.size(), 4u);
  ASSERT_EQ(polled.nodes.size(), 4u);
  for (size_t i = 0; i < polled.nodes.size(); ++i) {
    const core::NodeObservation& w = watched.nodes[i];
    const core::NodeObservation& p = polled.nodes[i];
    EXPECT_EQ(w.name, p.name);
    EXPECT_EQ(w.boot_id, p.boot_id) << p.name;
    EXPECT_EQ(w.talos, p.talos) << p.name;
    EXPECT_EQ(w.stage, p.stage) << p.name;
    EXPECT_EQ(w.ready, p.ready) << p.name;
    EXPECT_EQ(w.stage, core::MachineStage::kRunning) << p.name;
    EXPECT_EQ(w.reachable, p.reachable) << p.name;
    EXPECT_EQ(w.etcd_member, p.etcd_member) << p.name;
    EXPECT_TRUE(w.watched) << p.name << ": read from its live watch";
    EXPECT_FALSE(p.watched) << p.name << ": asked";
  }
}

// A look without etcd at a watched cluster (a no-op reconcile's) makes no call at all; etcd
// added after it is what a whole look sees.
TEST_F(ObserverWatchTest, ALookWithoutEtcdAtAWatchedClusterAsksNothing) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "", env_, Waker());
  ASSERT_NO_FATAL_FAILURE(LookUntilWatched(observer));
  const core::ObservedCluster whole = Look(observer);

  // The calls the simulator served after its journal's first `from` entries.
  auto calls_since = [&](size_t from) {
    std::vector<std::string> asked;
    const std::vector<sim::JournalEntry> entries = fleet_->journal().Entries();
    for (size_t i = from; i < entries.size(); ++i) {
      if (entries[i].kind == sim::JournalEntry::Kind::kCall) {
        asked.push_back(entries[i].node + " " + entries[i].what);
      }
    }
    return asked;
  };
  size_t before = fleet_->journal().Entries().size();
  absl::StatusOr<core::ObservedCluster> light = observer.ObserveWithoutEtcd(profile_);
  ASSERT_TRUE(light.ok()) << light.status();
  const std::vector<std::string> asked = calls_since(before);
  EXPECT_TRUE(asked.empty()) << asked.front();
  EXPECT_FALSE(light->etcd_observed);
  ASSERT_EQ(light->nodes.size(), 4u);
  EXPECT_FALSE(light->FindNode("cp-1")->etcd_member);

  before = fleet_->journal().Entries().size();
  ASSERT_TRUE(observer.ObserveEtcd(profile_, *light).ok());
  EXPECT_TRUE(light->etcd_observed);
  // As a whole look asks: each member's status, in one call apid proxies to each (three parts).
  EXPECT_EQ(calls_since(before).size(), 4u);
  int leaders = 0;
  for (const core::NodeObservation& w : whole.nodes) {
    const core::NodeObservation* l = light->FindNode(w.name);
    ASSERT_NE(l, nullptr) << w.name;
    EXPECT_EQ(l->etcd_member, w.etcd_member) << w.name;
    EXPECT_EQ(l->etcd_healthy, w.etcd_healthy) << w.name;
    EXPECT_EQ(l->etcd_leader, w.etcd_leader) << w.name;
    leaders += l->etcd_leader;
  }
  EXPECT_TRUE(whole.FindNode("cp-1")->etcd_member);
  EXPECT_EQ(leaders, 1);
}

// A reboot ends the node's watch, so the boot id it knew is not used past the boot it was read
// in: the next look asks, and the node is watched again.
TEST_F(ObserverWatchTest, ARebootEndsTheWatchAndTheNextLookAsksTheNodeAgain) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "", env_, Waker());
  ASSERT_NO_FATAL_FAILURE(LookUntilWatched(observer));
  const std::string old_boot = Look(observer).FindNode("w-1")->boot_id;
  const size_t reads = Calls("w-1", kRead).size();
  const size_t versions = Calls("w-1", kVersion).size();

  absl::StatusOr<FollowResult> upgraded =
      FollowLegacyUpgrade(*talos_, Address("w-1"), "ghcr.io/siderolabs/installer:v1.12.4");
  ASSERT_TRUE(upgraded.ok()) << upgraded.status();
  ASSERT_TRUE(WaitUntil([&] { return observer.WatchedNodes() == 3; }));

  const core::ObservedCluster after = Look(observer);
  const core::NodeObservation& w1 = *after.FindNode("w-1");
  EXPECT_NE(w1.boot_id, old_boot);
  EXPECT_EQ(w1.boot_id, *talos_->BootId(Address("w-1")));
  ASSERT_TRUE(w1.talos.has_value());
  EXPECT_EQ(w1.talos->ToString(), "1.12.4");
  EXPECT_EQ(w1.stage, core::MachineStage::kRunning);
  EXPECT_EQ(Calls("w-1", kVersion).size(), versions + 1);
  EXPECT_GT(Calls("w-1", kRead).size(), reads);
  ASSERT_TRUE(WaitUntil([&] { return observer.WatchedNodes() == 4; }));
}

// A node whose upgrade begins enters UPGRADING (no readiness is checked there), which wakes
// nothing: its fall, the end of its watch, is the one wake of the whole upgrade while no look
// starts a new watch.
TEST_F(ObserverWatchTest, AnUpgradeWakesItsClusterOnceAtTheFall) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "", env_, Waker());
  ASSERT_NO_FATAL_FAILURE(LookUntilWatched(observer));
  ASSERT_EQ(wakes_.load(), 0);
  absl::StatusOr<FollowResult> upgraded =
      FollowLegacyUpgrade(*talos_, Address("w-1"), "ghcr.io/siderolabs/installer:v1.12.4");
  ASSERT_TRUE(upgraded.ok()) << upgraded.status();
  // The watch's callbacks run in order: once the end's wake is in, every status's is.
  ASSERT_TRUE(WaitUntil([&] { return wakes_.load() > 0; }));
  EXPECT_EQ(wakes_.load(), 1);
}

// A cluster nobody looks at for the idle time is not watched any more: its connections may
// close.
TEST_F(ObserverWatchTest, WatchesOfAClusterNotLookedAtEnd) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "", env_, Waker(), std::chrono::seconds(2));
  ASSERT_NO_FATAL_FAILURE(LookUntilWatched(observer));
  ASSERT_TRUE(WaitUntil([&] { return observer.WatchedNodes() == 0; }));
  // Each ended once, as the server saw (it journals a watch when its end reaches it).
  EXPECT_TRUE(WaitUntil([&] { return CallsTo(kWatch) == 4u; }));
  EXPECT_EQ(wakes_.load(), 0) << "a watch ended here woke its cluster";
}

// A node that loses power says nothing first (no reboot sequence, no change of readiness): the
// end of its live watch is what wakes its cluster, so a node in flight read from that watch is
// not left to the next poll. The next look asks it, and does not read it from a watch.
TEST_F(ObserverWatchTest, TheEndOfALiveWatchWakesItsCluster) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "", env_, Waker());
  ASSERT_NO_FATAL_FAILURE(LookUntilWatched(observer));
  EXPECT_TRUE(Look(observer).FindNode("w-1")->watched);
  ASSERT_EQ(wakes_.load(), 0);

  sim::Fault cut;
  cut.kind = sim::FaultKind::kPowerCycle;
  cut.count = 1;
  ASSERT_TRUE(fleet_->InjectFault("w-1", cut).ok());
  ASSERT_TRUE(WaitUntil([&] { return wakes_.load() > 0; })) << "the watch's end woke nothing";
  EXPECT_EQ(observer.WatchedNodes(), 3);
  EXPECT_FALSE(Look(observer).FindNode("w-1")->watched);
}

// The look that a node in flight's fall wakes takes it as down without asking it (at a reboot
// that call went through an endpoint to a node that was down); the looks after start its watch
// again, and ask it when the watch is refused. Here the node's API stops answering while its
// machine runs on, which ends its watch as a reboot does: one look reads it down unasked, the
// next asks, and once the API is back a look reads it up from its new watch's first status.
TEST_F(ObserverWatchTest, TheLookAfterItsFallTakesANodeInFlightAsDownOnceWithoutAskingIt) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "", env_, Waker());
  ASSERT_NO_FATAL_FAILURE(LookUntilWatched(observer));
  sim::Fault mute;
  mute.kind = sim::FaultKind::kApiUnreachable;
  mute.count = -1;
  ASSERT_TRUE(fleet_->InjectFault("w-1", mute).ok());
  ASSERT_TRUE(WaitUntil([&] { return wakes_.load() > 0; })) << "the watch's end woke nothing";
  const std::vector<std::string> in_flight = {"w-1"};
  const auto look_in_flight = [&] {
    absl::StatusOr<core::ObservedCluster> observed =
        observer.ObserveNodesWithoutEtcd(profile_, in_flight);
    EXPECT_TRUE(observed.ok()) << observed.status();
    return observed.ok() && observed->FindNode("w-1")->reachable;
  };
  // The simulator journals a watch when it ends: one refused at once, or the one the fall
  // ended, which comes first.
  ASSERT_TRUE(WaitUntil([&] { return CallsTo(kWatch) == 1; })) << "the fallen watch";
  const size_t gets = CallsTo(kGet);
  const size_t watches = CallsTo(kWatch);
  EXPECT_FALSE(look_in_flight());
  EXPECT_EQ(CallsTo(kGet), gets) << "the node was asked at the look its fall woke";
  EXPECT_EQ(CallsTo(kWatch), watches);
  EXPECT_FALSE(look_in_flight());
  EXPECT_EQ(CallsTo(kWatch), watches + 1) << "the look after did not start the watch again";
  EXPECT_EQ(CallsTo(kGet), gets + 1) << "the watch was refused and the node not asked";
  ASSERT_TRUE(fleet_->ClearFaults("w-1").ok());
  EXPECT_TRUE(look_in_flight());
  EXPECT_EQ(observer.WatchedNodes(), 4) << "the look read the node from no watch";
  EXPECT_EQ(CallsTo(kGet), gets + 1) << "a look asked for the status its watch sends";
}

// What the daemon does before its controller goes: no watch is left to wake it, and looks
// ask again.
TEST_F(ObserverWatchTest, AfterStopWatchingNothingIsWatchedAndLooksAsk) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "", env_, Waker());
  ASSERT_NO_FATAL_FAILURE(LookUntilWatched(observer));
  observer.StopWatching();
  EXPECT_EQ(observer.WatchedNodes(), 0);
  const size_t reads = CallsTo(kRead);
  const size_t gets = CallsTo(kGet);
  Look(observer);
  Look(observer);
  EXPECT_EQ(CallsTo(kGet), gets + 8);
  EXPECT_EQ(CallsTo(kRead), reads);  // each status the one of a boot already read
  EXPECT_EQ(observer.WatchedNodes(), 0);
}

// Unwatched, every look asks each node's status; the boot id is read once a boot, for the
// first status of it a look had.
TEST_F(ObserverWatchTest, AnObserverWithoutWatchingAsksAtEveryLook) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "");
  for (int look = 0; look < 4; ++look) Look(observer);
  EXPECT_EQ(observer.WatchedNodes(), 0);
  EXPECT_EQ(CallsTo(kGet), 16u);
  EXPECT_EQ(CallsTo(kRead), 4u);
  EXPECT_EQ(CallsTo(kVersion), 4u);
  EXPECT_EQ(CallsTo(kWatch), 0u);
}

// What lets a look go without reading the boot id is the status being the same instance; a
// reboot makes a new one, so the look after it reads the new boot's id and asks its version.
TEST_F(ObserverWatchTest, UnwatchedALookAfterARebootReadsTheNewBoot) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "");
  const std::string old_boot = Look(observer).FindNode("w-1")->boot_id;
  ASSERT_FALSE(old_boot.empty());
  absl::StatusOr<FollowResult> upgraded =
      FollowLegacyUpgrade(*talos_, Address("w-1"), "ghcr.io/siderolabs/installer:v1.12.4");
  ASSERT_TRUE(upgraded.ok()) << upgraded.status();
  const size_t reads = Calls("w-1", kRead).size();
  const size_t versions = Calls("w-1", kVersion).size();

  const core::ObservedCluster after = Look(observer);
  const core::NodeObservation& w1 = *after.FindNode("w-1");
  EXPECT_EQ(Calls("w-1", kRead).size(), reads + 1);
  EXPECT_EQ(Calls("w-1", kVersion).size(), versions + 1);
  EXPECT_NE(w1.boot_id, old_boot);
  ASSERT_TRUE(w1.talos.has_value());
  EXPECT_EQ(w1.talos->ToString(), "1.12.4");
  EXPECT_EQ(w1.boot_id, *talos_->BootId(Address("w-1")));

  Look(observer);                                    // the new boot's status again: nothing read
  EXPECT_EQ(Calls("w-1", kRead).size(), reads + 2);  // + the test's own read above
}

// What a look lists of the Kubernetes Nodes, as the simulator's API server journals it (a
// list, or a watch when it ends: the informer's watch lasts longer than these tests).
size_t NodeListsIn(const std::vector<sim::JournalEntry>& entries) {
  return std::count_if(entries.begin(), entries.end(), [](const sim::JournalEntry& e) {
    return e.kind == sim::JournalEntry::Kind::kCall && e.what == "kube:GET /api/v1/nodes";
  });
}

class ObserverKubeWatchTest : public ObserverWatchTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ObserverWatchTest::SetUp());
    std::unique_ptr<kube::KubeClient> client;
    ASSERT_NO_FATAL_FAILURE(NewKubeClient("prod", &client));
    kube_ = std::move(client);
  }

  void TearDown() override {
    kube_.reset();  // its kept-alive connection would hold the server's stop
    ObserverWatchTest::TearDown();
  }

  size_t NodeLists() { return NodeListsIn(fleet_->journal().Entries()); }

  // Looks until a look reads the Nodes from the informer: it lists nothing.
  bool LookUntilInformed(TalosFleetObserver& observer) {
    return WaitUntil([&] {
      const size_t before = NodeLists();
      Look(observer);
      return NodeLists() == before;
    });
  }

  std::shared_ptr<kube::KubeClient> kube_;
};

TEST_F(ObserverKubeWatchTest, AWatchedLookReadsTheNodesFromTheInformerAndItsOwnCordonAtOnce) {
  FixedClusterClients clients(talos_, kube_);
  TalosFleetObserver observer(clients, "", env_, Waker());
  ASSERT_NO_FATAL_FAILURE(LookUntilWatched(observer));
  ASSERT_TRUE(LookUntilInformed(observer));
  const core::ObservedCluster informed = Look(observer);
  EXPECT_TRUE(informed.FindNode("w-1")->ready);
  EXPECT_TRUE(informed.FindNode("w-1")->schedulable);
  EXPECT_EQ(informed.FindNode("w-1")->kubelet->ToString(), "1.34.1");

  // The look right after this client's own write sees it, whether the informer has the
  // write's version yet or the look lists the Nodes for it.
  for (const bool cordoned : {true, false, true}) {
    ASSERT_TRUE(kube_->SetUnschedulable("w-1", cordoned).ok());
    EXPECT_EQ(Look(observer).FindNode("w-1")->schedulable, !cordoned);
  }
  // And once the informer holds it, from the informer.
  ASSERT_TRUE(LookUntilInformed(observer));
  EXPECT_FALSE(Look(observer).FindNode("w-1")->schedulable);
}

// Another actor's change of a Node (here a cordon through another client) reaches the cache
// through the watch, and a look reads it there without listing.
TEST_F(ObserverKubeWatchTest, AnotherActorsCordonReachesTheLookThroughTheWatch) {
  FixedClusterClients clients(talos_, kube_);
  TalosFleetObserver observer(clients, "", env_, Waker());
  ASSERT_NO_FATAL_FAILURE(LookUntilWatched(observer));
  ASSERT_TRUE(LookUntilInformed(observer));
  std::unique_ptr<kube::KubeClient> other;
  ASSERT_NO_FATAL_FAILURE(NewKubeClient("prod", &other));
  ASSERT_TRUE(other->SetUnschedulable("cp-2", true).ok());
  const size_t before = NodeLists();
  ASSERT_TRUE(WaitUntil([&] { return !Look(observer).FindNode("cp-2")->schedulable; }));
  EXPECT_EQ(NodeLists(), before);
  other.reset();  // its kept-alive connection would hold the server's stop
}

// Kubernetes marks a Node not Ready after its machine went down (in a real cluster only after
// the node lifecycle controller's grace period): the machine's watch told the fall already, so
// that loss wakes nothing. The Node's Ready on its return does.
TEST_F(ObserverKubeWatchTest, ANodesLossOfReadyAfterItsMachinesFallWakesNothing) {
  FixedClusterClients clients(talos_, kube_);
  TalosFleetObserver observer(clients, "", env_, Waker());
  ASSERT_NO_FATAL_FAILURE(LookUntilWatched(observer));
  ASSERT_TRUE(LookUntilInformed(observer));
  ASSERT_TRUE(WaitUntil([&] { return wakes_.load() >= 1; }));  // the informer's list
  const int before = wakes_.load();
  absl::StatusOr<FollowResult> upgraded =
      FollowLegacyUpgrade(*talos_, Address("w-1"), "ghcr.io/siderolabs/installer:v1.12.4");
  ASSERT_TRUE(upgraded.ok()) << upgraded.status();
  // Back, ready in Talos and in Kubernetes at once (the simulator's boot): a look reads the
  // Node's Ready once the informer has it, and sees no readiness its new watch could change.
  ASSERT_TRUE(WaitUntil([&] { return Look(observer).FindNode("w-1")->ready; }));
  // The informer calls back in the order of its events: the Ready's wake comes after the loss's.
  ASSERT_TRUE(WaitUntil([&] { return wakes_.load() >= before + 2; }));
  EXPECT_EQ(wakes_.load(), before + 2) << "the fall and the Node's Ready wake; not its loss";
}

// Boots that last two seconds, so that a look finds a node still booting.
class ObserverWatchBootTest : public ObserverWatchTest {
 protected:
  std::string Timings() const override { return "{boot: 2000s}"; }
};

// A watch started while the node boots (after a look found it up again) follows it to Running:
// the look reads the change from the watch, without asking.
TEST_F(ObserverWatchBootTest, AWatchStartedWhileTheNodeBootsFollowsItToRunning) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "", env_, Waker());
  ASSERT_TRUE(WaitUntil([&] {
    return Look(observer).FindNode("w-1")->stage == core::MachineStage::kRunning &&
           observer.WatchedNodes() == 4;
  }));
  ASSERT_TRUE(talos_->Reboot(Address("w-1"), RebootMode::kDefault).ok());
  ASSERT_TRUE(WaitUntil([&] {
    const core::NodeObservation w1 = *Look(observer).FindNode("w-1");
    return w1.reachable && w1.stage == core::MachineStage::kBooting && observer.WatchedNodes() == 4;
  }));
  const size_t gets = Calls("w-1", kGet).size();
  const int wakes = wakes_.load();
  // The change to Running wakes the cluster: no look has to come by chance to see it.
  ASSERT_TRUE(WaitUntil([&] { return wakes_.load() > wakes; }));
  EXPECT_EQ(Look(observer).FindNode("w-1")->stage, core::MachineStage::kRunning);
  EXPECT_EQ(Calls("w-1", kGet).size(), gets);
}

}  // namespace
}  // namespace tr::reconciler::talos
