// The executor's reboot of a control plane (TalosRolloutExecutor, kRebootNode) on talos-sim:
// the node's etcd leadership is handed to another member first, so etcd never loses its leader
// to the reboot; a follower reboots without a hand-off; a refused hand-off does not hold the
// reboot.
#include <gmock/gmock.h>

#include <algorithm>

#include "reconciler/operations/executor.h"
#include "tests/support/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kRebootedControlPlanes = {"cp-1", "cp-2", "cp-3"};
using ::testing::StartsWith;

class ExecutorRebootTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.13.2", "v1.13.2")));
    std::unique_ptr<TalosClient> client;
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client));
    talos_ = std::move(client);
    profile_.name = "prod";
    for (const std::string& cp : kRebootedControlPlanes) {
      profile_.nodes.push_back({cp, Address(cp), core::NodeRole::kControlPlane});
    }
    profile_.nodes.push_back({"w-1", Address("w-1"), core::NodeRole::kWorker});
  }

  absl::StatusOr<ActionResult> Reboot(const std::string& node) {
    FixedClusterClients clients(talos_);
    TalosRolloutExecutor executor(clients, {}, Env::Default());
    core::RolloutDecision decision;
    decision.kind = core::ActionKind::kRebootNode;
    decision.node = node;
    return executor.Execute(profile_, decision, {});
  }

  std::string Leader() {
    for (const std::string& cp : kRebootedControlPlanes) {
      if (Snapshot(cp).etcd_leader) return cp;
    }
    return "";
  }

  // Waits until `node` went down and came back, and returns the journal's entries so far.
  std::vector<sim::JournalEntry> AfterReboot(const std::string& node) {
    auto back = [&](const std::vector<sim::JournalEntry>& entries) {
      bool down = false;
      for (const auto& e : entries) {
        if (e.kind != sim::JournalEntry::Kind::kState || e.node != node) continue;
        if (e.what == "down") down = true;
        if (down && e.what == "up") return true;
      }
      return false;
    };
    EXPECT_TRUE(fleet_->journal().WaitFor(back, std::chrono::seconds(30)).ok())
        << node << " did not reboot";
    return fleet_->journal().Entries();
  }

  static int Count(const std::vector<sim::JournalEntry>& entries, const std::string& what,
                   const std::string& detail_part = "") {
    return static_cast<int>(std::count_if(entries.begin(), entries.end(), [&](const auto& e) {
      return e.kind == sim::JournalEntry::Kind::kState && e.what == what &&
             e.detail.find(detail_part) != std::string::npos;
    }));
  }

  std::shared_ptr<TalosClient> talos_;
  core::ClusterProfile profile_;
};

TEST_F(ExecutorRebootTest, TheLeaderHandsEtcdLeadershipOverBeforeItReboots) {
  const std::string leader = Leader();
  ASSERT_FALSE(leader.empty());
  absl::StatusOr<ActionResult> done = Reboot(leader);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_THAT(done->detail, StartsWith("etcd leadership handed to cp-"));
  EXPECT_THAT(done->detail, HasSubstr("; reboot requested"));

  const auto entries = AfterReboot(leader);
  EXPECT_EQ(Count(entries, "etcd-leader", "handed over by " + leader), 1);
  EXPECT_EQ(Count(entries, "etcd-leader-lost"), 0) << "etcd lost its leader to the reboot";
  EXPECT_NE(Leader(), leader);
}

TEST_F(ExecutorRebootTest, AFollowerAndAWorkerRebootWithoutAHandOff) {
  std::string follower;
  for (const std::string& cp : kRebootedControlPlanes) {
    if (cp != Leader()) follower = cp;
  }
  const std::string leader = Leader();
  absl::StatusOr<ActionResult> done = Reboot(follower);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->detail, "reboot requested");
  AfterReboot(follower);

  done = Reboot("w-1");
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->detail, "reboot requested");
  const auto entries = AfterReboot("w-1");
  EXPECT_EQ(Count(entries, "etcd-leader", "handed over"), 0);
  EXPECT_EQ(Leader(), leader);
  // Only the control planes are asked; a worker would refuse (Unimplemented).
  EXPECT_TRUE(Calls("w-1", "/machine.MachineService/EtcdForfeitLeadership").empty());
  EXPECT_EQ(Calls(follower, "/machine.MachineService/EtcdForfeitLeadership").size(), 1u);
}

TEST_F(ExecutorRebootTest, ARefusedHandOffIsSaidAndTheRebootGoesOn) {
  const std::string leader = Leader();
  std::string successor;  // the first other member by etcd member ID
  for (const std::string& cp : kRebootedControlPlanes) {
    if (cp != leader &&
        (successor.empty() || *Snapshot(cp).etcd_member_id < *Snapshot(successor).etcd_member_id)) {
      successor = cp;
    }
  }
  sim::Fault unhealthy;
  unhealthy.kind = sim::FaultKind::kEtcdUnhealthy;
  ASSERT_TRUE(fleet_->InjectFault(successor, unhealthy).ok());

  absl::StatusOr<ActionResult> done = Reboot(leader);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_THAT(done->detail, StartsWith("etcd leadership not handed off ("));
  EXPECT_THAT(done->detail, HasSubstr("leader transfer took too long"));
  EXPECT_THAT(done->detail, HasSubstr("; reboot requested"));
  const auto entries = AfterReboot(leader);
  EXPECT_EQ(Count(entries, "etcd-leader-lost"), 1) << "the leader's reboot was not an election";
}

}  // namespace
}  // namespace tr::reconciler::talos
