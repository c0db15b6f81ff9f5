// The etcd member list between looks (EtcdVoters): a member the cluster's last list held as a
// voter is not looked up again; a learner, or a member under an id no list held, has the list
// asked again, and the answer replaces what was known.
#include "reconciler/operations/etcd_voters.h"

#include <gtest/gtest.h>

#include "reconciler/operations/observer.h"
#include "tests/talos/scripted_client.h"

namespace tr::reconciler {
namespace {

class ScriptedClusterClients final : public ClusterClientFactory {
 public:
  explicit ScriptedClusterClients(std::shared_ptr<talos::TalosClient> talos)
      : talos_(std::move(talos)) {}
  absl::StatusOr<ClusterClients> ForProfile(const core::ClusterProfile&) override {
    return ClusterClients{talos_, nullptr};
  }

 private:
  std::shared_ptr<talos::TalosClient> talos_;
};

class EtcdVotersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    profile_.name = "prod";
    for (const char* cp : {"cp-1", "cp-2", "cp-3"}) {
      profile_.nodes.push_back({cp, cp, core::NodeRole::kControlPlane});
      SetMember(cp, Id(cp), /*learner=*/false);
    }
  }

  static uint64_t Id(const std::string& node) { return std::hash<std::string>()(node) | 1; }

  // `node`'s etcd answers as member `id`, healthy, and the list holds it so.
  void SetMember(const std::string& node, uint64_t id, bool learner) {
    talos::EtcdMemberStatus status;
    status.member_id = id;
    status.leader = Id("cp-1");
    status.is_learner = learner;
    client_->etcd_status[node] = status;
    std::erase_if(client_->etcd_members,
                  [&](const talos::EtcdMember& m) { return m.hostname == node; });
    client_->etcd_members.push_back({id, node, {}, {}, learner});
  }

  // Every control plane, each reachable, its etcd not observed yet.
  core::ObservedCluster Reachable() const {
    core::ObservedCluster observed;
    observed.name = profile_.name;
    observed.etcd_observed = false;
    for (const core::NodeSpec& spec : profile_.nodes) {
      core::NodeObservation node;
      node.name = spec.name;
      node.reachable = true;
      observed.nodes.push_back(node);
    }
    return observed;
  }

  // A look at etcd of every control plane, each reachable; `voting` by node.
  std::map<std::string, bool> Look() {
    core::ObservedCluster observed = Reachable();
    EXPECT_TRUE(observer_.ObserveEtcd(profile_, observed).ok());
    std::map<std::string, bool> voting;
    for (const core::NodeObservation& node : observed.nodes) {
      EXPECT_TRUE(node.etcd_healthy) << node.name;
      voting[node.name] = node.etcd_member;
    }
    return voting;
  }

  const std::map<std::string, bool> kAllVoting{{"cp-1", true}, {"cp-2", true}, {"cp-3", true}};
  core::ClusterProfile profile_;
  std::shared_ptr<talos::ScriptedClient> client_ = std::make_shared<talos::ScriptedClient>();
  ScriptedClusterClients clients_{client_};
  TalosFleetObserver observer_{clients_, ""};
};

TEST_F(EtcdVotersTest, TheListIsAskedOnceWhileEveryMemberIsAKnownVoter) {
  EXPECT_EQ(Look(), kAllVoting);
  EXPECT_EQ(client_->member_list_calls, 1);
  EXPECT_EQ(Look(), kAllVoting);
  EXPECT_EQ(Look(), kAllVoting);
  EXPECT_EQ(client_->member_list_calls, 1);
}

TEST_F(EtcdVotersTest, ALearnerIsLookedUpAtEveryLookUntilAListSaysItWasPromoted) {
  SetMember("cp-3", Id("cp-3"), /*learner=*/true);
  std::map<std::string, bool> learning = kAllVoting;
  learning["cp-3"] = false;
  EXPECT_EQ(Look(), learning);
  EXPECT_EQ(client_->member_list_calls, 1);
  EXPECT_EQ(Look(), learning);
  EXPECT_EQ(client_->member_list_calls, 2);

  SetMember("cp-3", Id("cp-3"), /*learner=*/false);  // promoted
  EXPECT_EQ(Look(), kAllVoting);
  EXPECT_EQ(client_->member_list_calls, 3);
  EXPECT_EQ(Look(), kAllVoting);
  EXPECT_EQ(client_->member_list_calls, 3);
}

// A control plane whose member was removed and added again answers under a new id: the list is
// asked, and the old id is no voter any more.
TEST_F(EtcdVotersTest, AMemberUnderANewIdHasTheListAskedAndTheOldIdForgotten) {
  EXPECT_EQ(Look(), kAllVoting);
  const uint64_t old_id = Id("cp-2");
  SetMember("cp-2", old_id + 2, /*learner=*/true);
  std::map<std::string, bool> rejoining = kAllVoting;
  rejoining["cp-2"] = false;
  EXPECT_EQ(Look(), rejoining);
  EXPECT_EQ(client_->member_list_calls, 2);

  // Answering under its old id again (as no real member does) would need the list again.
  SetMember("cp-2", old_id, /*learner=*/false);
  client_->etcd_members.pop_back();  // the list does not hold it
  EXPECT_EQ(Look(), rejoining);
  EXPECT_EQ(client_->member_list_calls, 3);
}

TEST(EtcdVotersAlone, EachClusterKeepsItsOwnVoters) {
  EtcdVoters voters;
  voters.Replace("a", {{7, "cp-1", {}, {}, false}, {8, "cp-2", {}, {}, true}});
  EXPECT_TRUE(voters.Known("a", 7));
  EXPECT_FALSE(voters.Known("a", 8));  // a learner
  EXPECT_FALSE(voters.Known("b", 7));
  voters.Replace("a", {{8, "cp-2", {}, {}, false}});
  EXPECT_FALSE(voters.Known("a", 7));
  EXPECT_TRUE(voters.Known("a", 8));
}

// The round of a look is one call for every control plane (TalosClient::EtcdStatuses); a node it
// did not reach reads as a status that failed, the others as they answered.
TEST_F(EtcdVotersTest, TheRoundIsOneCallAndANodeItDidNotReachReadsAsFailed) {
  EXPECT_EQ(Look(), kAllVoting);
  EXPECT_EQ(client_->etcd_statuses_calls, 1);
  EXPECT_EQ(client_->etcd_status_calls, 0);
  client_->etcd_status.erase("cp-2");
  core::ObservedCluster observed = Reachable();
  ASSERT_TRUE(observer_.ObserveEtcd(profile_, observed).ok());
  EXPECT_EQ(client_->etcd_statuses_calls, 2);
  EXPECT_FALSE(observed.FindNode("cp-2")->etcd_healthy);
  EXPECT_FALSE(observed.FindNode("cp-2")->etcd_member);
  EXPECT_TRUE(observed.FindNode("cp-1")->etcd_healthy);
  EXPECT_TRUE(observed.FindNode("cp-3")->etcd_member);
}

// An apid that will not proxy the round to every node (Unimplemented, InvalidArgument) has it
// asked one node at a time, with the same answers.
TEST_F(EtcdVotersTest, AnApidThatRefusesTheOneCallIsAskedNodeByNode) {
  client_->etcd_statuses_refused =
      absl::InvalidArgumentError("one-2-many proxying is not supported");
  EXPECT_EQ(Look(), kAllVoting);
  EXPECT_EQ(client_->etcd_statuses_calls, 1);
  EXPECT_EQ(client_->etcd_status_calls, 3);
}

}  // namespace
}  // namespace tr::reconciler
