// TalosFleetObserver against the in-process simulator over mutual TLS: what it asks the nodes,
// counted in the simulator's journal; with the simulator's Kubernetes API, what it reads of the
// Nodes.
#include "reconciler/operations/observer.h"

#include <gtest/gtest.h>

#include "core/pending_mark.h"
#include "core/schematic.h"
#include "tests/support/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

class ObserverTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("1.11.6", "1.11.6")));
    std::unique_ptr<TalosClient> client;
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client));
    talos_ = std::move(client);
    profile_ = ThreeNodeProfile();
  }

  size_t CallsTo(const std::string& method) {
    size_t n = 0;
    for (const char* node : {"cp-1", "cp-2", "cp-3", "w-1"}) n += Calls(node, method).size();
    return n;
  }

  std::shared_ptr<TalosClient> talos_;
  core::ClusterProfile profile_;
};

TEST_F(ObserverTest, AsksEachNodeItsVersionOncePerBootAndTheMemberListOnceForKnownVoters) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "");
  for (int look = 0; look < 3; ++look) {
    absl::StatusOr<core::ObservedCluster> observed = observer.Observe(profile_);
    ASSERT_TRUE(observed.ok()) << observed.status();
    ASSERT_EQ(observed->nodes.size(), 4u);
    for (const core::NodeObservation& node : observed->nodes) {
      ASSERT_TRUE(node.talos.has_value()) << node.name;
      EXPECT_EQ(node.talos->ToString(), "1.11.6") << node.name;
      EXPECT_FALSE(node.boot_id.empty()) << node.name;
    }
    EXPECT_TRUE(observed->FindNode("cp-2")->etcd_member);
    // Vanilla images: read, and no factory schematic.
    EXPECT_TRUE(observed->FindNode("w-1")->extensions_observed);
    EXPECT_EQ(observed->FindNode("w-1")->schematic, std::nullopt);
  }
  EXPECT_EQ(CallsTo("/machine.MachineService/Version"), 4u);
  EXPECT_EQ(CallsTo("/cosi.resource.State/List"), 4u);  // ExtensionStatuses, once per boot
  // Every member was a voter in the first look's list (EtcdVoters).
  EXPECT_EQ(CallsTo("/machine.MachineService/EtcdMemberList"), 1u);
  EXPECT_EQ(CallsTo("/machine.MachineService/EtcdStatus"), 9u);

  // A new boot on a new version is asked again, and only that node.
  absl::StatusOr<FollowResult> upgraded =
      FollowLegacyUpgrade(*talos_, Address("w-1"), "ghcr.io/siderolabs/installer:v1.12.4");
  ASSERT_TRUE(upgraded.ok()) << upgraded.status();
  absl::StatusOr<core::ObservedCluster> after = observer.Observe(profile_);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->FindNode("w-1")->talos->ToString(), "1.12.4");
  EXPECT_EQ(Calls("w-1", "/machine.MachineService/Version").size(), 2u);
  EXPECT_EQ(CallsTo("/machine.MachineService/Version"), 5u);
  EXPECT_EQ(CallsTo("/cosi.resource.State/List"), 5u);
}

TEST_F(ObserverTest, FollowingOneNodeAsksOnlyThatNode) {
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "");
  const size_t before = fleet_->journal().Entries().size();
  absl::StatusOr<core::ObservedCluster> observed = observer.ObserveNodes(profile_, {"w-1"});
  ASSERT_TRUE(observed.ok()) << observed.status();
  ASSERT_EQ(observed->nodes.size(), 1u);
  EXPECT_EQ(observed->nodes.front().name, "w-1");
  const std::vector<sim::JournalEntry> entries = fleet_->journal().Entries();
  for (size_t i = before; i < entries.size(); ++i) {
    if (entries[i].kind == sim::JournalEntry::Kind::kCall) {
      EXPECT_EQ(entries[i].node, "w-1") << entries[i].what;
    }
  }
}

// A pass that read a control plane in flight (and so the member list) asks the look after it
// only the other control planes, and what it reports is what asking everything reports.
TEST_F(ObserverTest, APassesEtcdReadingsSpareTheControlPlanesReadAndTheMemberList) {
  constexpr char kStatus[] = "/machine.MachineService/EtcdStatus";
  constexpr char kList[] = "/machine.MachineService/EtcdMemberList";
  FixedClusterClients clients(talos_);
  TalosFleetObserver observer(clients, "");
  EtcdReadings pass;
  absl::StatusOr<core::ObservedCluster> one = observer.ObserveNodesWithoutEtcd(profile_, {"cp-2"});
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(observer.ObserveEtcdReusing(profile_, *one, pass).ok());
  EXPECT_TRUE(one->FindNode("cp-2")->etcd_member);
  EXPECT_EQ(CallsTo(kStatus), 1u);
  EXPECT_EQ(CallsTo(kList), 1u);

  absl::StatusOr<core::ObservedCluster> whole = observer.ObserveWithoutEtcd(profile_);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE(observer.ObserveEtcdReusing(profile_, *whole, pass).ok());
  EXPECT_EQ(Calls("cp-2", kStatus).size(), 1u);
  EXPECT_EQ(CallsTo(kStatus), 3u);
  EXPECT_EQ(CallsTo(kList), 1u);
  EXPECT_EQ(pass.nodes.size(), 3u);

  // Without the pass's readings every control plane is asked (the list not: its members are
  // known voters): the same answers.
  absl::StatusOr<core::ObservedCluster> asked = observer.Observe(profile_);
  ASSERT_TRUE(asked.ok()) << asked.status();
  EXPECT_EQ(CallsTo(kStatus), 6u);
  EXPECT_EQ(CallsTo(kList), 1u);
  int leaders = 0;
  for (const char* cp : {"cp-1", "cp-2", "cp-3"}) {
    const core::NodeObservation& reused = *whole->FindNode(cp);
    const core::NodeObservation& fresh = *asked->FindNode(cp);
    EXPECT_TRUE(reused.etcd_member && reused.etcd_healthy) << cp;
    EXPECT_EQ(reused.etcd_member, fresh.etcd_member) << cp;
    EXPECT_EQ(reused.etcd_healthy, fresh.etcd_healthy) << cp;
    EXPECT_EQ(reused.etcd_leader, fresh.etcd_leader) << cp;
    leaders += reused.etcd_leader ? 1 : 0;
  }
  EXPECT_EQ(leaders, 1);
}

// The pending-install mark outlives the status file on the Node: whatever the status says, the
// observer reads it there, and a value that does not parse is no mark (and no failed look).
TEST_F(ObserverTest, ReadsTheNodesPendingInstallMarkAndNoMalformedOne) {
  std::unique_ptr<kube::KubeClient> client;
  ASSERT_NO_FATAL_FAILURE(NewKubeClient("prod", &client));
  std::shared_ptr<kube::KubeClient> kube = std::move(client);
  const core::PendingInstallMark mark{*core::ParseTalosVersion("1.12.4"),
                                      std::string(core::kEmptySchematicId), "b-1"};
  ASSERT_TRUE(kube->SetPendingInstall("w-1", core::EncodePendingMark(mark)).ok());
  ASSERT_TRUE(kube->SetPendingInstall("cp-2", "v1.12.4 boot=b-1 boot=b-2").ok());
  FixedClusterClients clients(talos_, kube);
  TalosFleetObserver observer(clients, "");

  absl::StatusOr<core::ObservedCluster> observed = observer.Observe(profile_);
  ASSERT_TRUE(observed.ok()) << observed.status();
  EXPECT_EQ(observed->FindNode("w-1")->pending_mark, mark);
  EXPECT_EQ(observed->FindNode("cp-1")->pending_mark, std::nullopt);
  const core::NodeObservation& malformed = *observed->FindNode("cp-2");
  EXPECT_EQ(malformed.pending_mark, std::nullopt);
  EXPECT_TRUE(malformed.reachable);
  EXPECT_TRUE(malformed.ready);
  EXPECT_TRUE(malformed.etcd_member);

  ASSERT_TRUE(kube->SetPendingInstall("w-1", std::nullopt).ok());
  absl::StatusOr<core::ObservedCluster> after = observer.ObserveNodes(profile_, {"w-1"});
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->FindNode("w-1")->pending_mark, std::nullopt);
}

}  // namespace
}  // namespace tr::reconciler::talos
