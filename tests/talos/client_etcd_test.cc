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

// Every member's status in one call through one endpoint, apid proxying it to each (`nodes`
// metadata); a node apid cannot reach, or whose machined refuses, is that node's error, named.
TEST_F(ClientEtcdTest, EveryMembersStatusInOneCallEachNodesErrorItsOwn) {
  sim::Fault down;
  down.kind = sim::FaultKind::kApiUnreachable;
  down.count = -1;
  ASSERT_TRUE(fleet_->InjectFault("cp-3", down).ok());
  const size_t before = fleet_->journal().Entries().size();
  const std::vector<std::string> asked = {Address("cp-1"), Address("cp-2"), Address("cp-3"),
                                          Address("w-1")};
  TalosClient::EtcdStatusOfEach each;
  TR_ASSERT_OK_AND_ASSIGN(each, client_->EtcdStatuses(asked));
  ASSERT_EQ(each.size(), 4u);
  for (const char* node : {"cp-1", "cp-2"}) {
    const absl::StatusOr<EtcdMemberStatus>& status = each.at(Address(node));
    ASSERT_TRUE(status.ok()) << node << ": " << status.status();
    EXPECT_EQ(status->member_id, *Snapshot(node).etcd_member_id) << node;
    EXPECT_TRUE(status->errors.empty()) << node;
  }
  const absl::Status down_error = each.at(Address("cp-3")).status();
  EXPECT_EQ(down_error.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(down_error.message()),
              HasSubstr("talos EtcdStatus on node " + Address("cp-3")));
  const absl::Status worker_error = each.at(Address("w-1")).status();
  EXPECT_EQ(worker_error.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(worker_error.message()),
              HasSubstr("etcd status is only available on control plane nodes"));
  // One call for the client; each node's part served (or refused) apart.
  int calls = 0;
  const std::vector<sim::JournalEntry> entries = fleet_->journal().Entries();
  for (size_t i = before; i < entries.size(); ++i) {
    if (entries[i].kind == sim::JournalEntry::Kind::kCall &&
        !entries[i].detail.starts_with(sim::kFanoutPart)) {
      ++calls;
      EXPECT_THAT(entries[i].detail, ::testing::StartsWith(sim::kFanoutCall));
    }
  }
  EXPECT_EQ(calls, 1);
}

// One node alone is asked as EtcdStatus asks it: no `nodes` metadata.
TEST_F(ClientEtcdTest, OneMembersStatusIsAskedAlone) {
  const std::vector<sim::JournalEntry> earlier = fleet_->journal().Entries();
  const uint64_t before = earlier.empty() ? 0 : earlier.back().seq;
  TalosClient::EtcdStatusOfEach each;
  TR_ASSERT_OK_AND_ASSIGN(each, client_->EtcdStatuses({Address("cp-2")}));
  ASSERT_EQ(each.size(), 1u);
  ASSERT_TRUE(each.at(Address("cp-2")).ok()) << each.at(Address("cp-2")).status();
  std::vector<sim::JournalEntry> calls;
  for (const sim::JournalEntry& entry : fleet_->journal().Entries()) {
    if (entry.seq > before && entry.kind == sim::JournalEntry::Kind::kCall) calls.push_back(entry);
  }
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls.front().node, "cp-2");
  EXPECT_EQ(calls.front().detail, "");
}

// After a round, calls for nodes that are not endpoints go through the etcd leader's endpoint: a
// rollout reboots the leader last, so a worker's watch started there outlasts the other control
// planes' reboots.
TEST_F(ClientEtcdTest, ARoundMakesTheLeadersEndpointTheOneCallsPrefer) {
  const std::string leader = LeaderFirst().front();
  ASSERT_TRUE(Snapshot(leader).etcd_leader) << "no leader to start from";
  // A call for the leader goes through another endpoint, which calls then prefer.
  ASSERT_TRUE(client_->Version(Address(leader)).ok());
  const auto endpoint_of_next_worker_call = [&] {
    const std::vector<sim::JournalEntry> calls = Calls("w-1", "/machine.MachineService/Version");
    EXPECT_FALSE(calls.empty());
    return calls.empty() ? std::string() : calls.back().endpoint;
  };
  ASSERT_TRUE(client_->Version(Address("w-1")).ok());
  ASSERT_NE(endpoint_of_next_worker_call(), leader);

  std::vector<std::string> members;
  for (const std::string& node : kEtcdMembers) members.push_back(Address(node));
  TalosClient::EtcdStatusOfEach each;
  TR_ASSERT_OK_AND_ASSIGN(each, client_->EtcdStatuses(members));
  ASSERT_TRUE(client_->Version(Address("w-1")).ok());
  EXPECT_EQ(endpoint_of_next_worker_call(), leader);
}

}  // namespace
}  // namespace tr::reconciler::talos
