// The real gRPC Talos client against talos-sim: EtcdForfeitLeadership, which moves etcd
// leadership off a control plane before it reboots.
#include <gmock/gmock.h>

#include <algorithm>

#include "tests/support/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kEtcdMembers = {"cp-1", "cp-2", "cp-3"};

class ClientEtcdTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.13.2", "v1.13.2")));
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client_));
  }

  // The control planes, the etcd leader first.
  std::vector<std::string> LeaderFirst() {
    std::vector<std::string> nodes = kEtcdMembers;
    std::stable_partition(nodes.begin(), nodes.end(),
                          [&](const std::string& n) { return Snapshot(n).etcd_leader; });
    return nodes;
  }

  // The member etcd hands leadership to: the first other one of its list, ordered by ID.
  std::string FirstOtherMember(const std::string& leader) {
    std::string first;
    uint64_t first_id = 0;
    for (const std::string& n : kEtcdMembers) {
      const uint64_t id = *Snapshot(n).etcd_member_id;
      if (n != leader && (first.empty() || id < first_id)) {
        first = n;
        first_id = id;
      }
    }
    return first;
  }

  std::unique_ptr<TalosClient> client_;
};

TEST_F(ClientEtcdTest, TheLeaderHandsLeadershipToTheFirstOtherMember) {
  const std::vector<std::string> nodes = LeaderFirst();
  ASSERT_TRUE(Snapshot(nodes[0]).etcd_leader) << "no leader to start from";
  const std::string successor = FirstOtherMember(nodes[0]);

  std::string new_leader;
  TR_ASSERT_OK_AND_ASSIGN(new_leader, client_->EtcdForfeitLeadership(Address(nodes[0])));
  EXPECT_EQ(new_leader, successor);
  EXPECT_TRUE(Snapshot(successor).etcd_leader);
  EXPECT_FALSE(Snapshot(nodes[0]).etcd_leader);
}

TEST_F(ClientEtcdTest, AFollowerHasNothingToHandOver) {
  const std::vector<std::string> nodes = LeaderFirst();
  std::string new_leader = "unset";
  TR_ASSERT_OK_AND_ASSIGN(new_leader, client_->EtcdForfeitLeadership(Address(nodes[1])));
  EXPECT_EQ(new_leader, "");
  EXPECT_TRUE(Snapshot(nodes[0]).etcd_leader) << "leadership moved although a follower was asked";
}

TEST_F(ClientEtcdTest, AWorkerRefusesAsTalosDoes) {
  auto answer = client_->EtcdForfeitLeadership(Address("w-1"));
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(answer.status().message()),
              HasSubstr("etcd forfeit leadership is only available on control plane nodes"));
  EXPECT_THAT(std::string(answer.status().message()),
              HasSubstr("talos EtcdForfeitLeadership on node " + Address("w-1")));
}

TEST_F(ClientEtcdTest, AnUnhealthySuccessorTimesTheTransferOutAndTheLeaderKeepsIt) {
  const std::vector<std::string> nodes = LeaderFirst();
  sim::Fault unhealthy;
  unhealthy.kind = sim::FaultKind::kEtcdUnhealthy;
  ASSERT_TRUE(fleet_->InjectFault(FirstOtherMember(nodes[0]), unhealthy).ok());

  auto answer = client_->EtcdForfeitLeadership(Address(nodes[0]));
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(std::string(answer.status().message()),
              HasSubstr("failed to forfeit leadership: etcdserver: request timed out, leader "
                        "transfer took too long"));
  EXPECT_TRUE(Snapshot(nodes[0]).etcd_leader);
}

}  // namespace
}  // namespace tr::reconciler::talos
