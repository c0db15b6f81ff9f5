// The executor's completion of a node (TalosRolloutExecutor, kCompleteNode): it uncordons a
// node the lifecycle path cordoned, and does nothing, nor says it did, for a node Talos already
// uncordoned after its legacy upgrade.
#include <gmock/gmock.h>

#include "reconciler/operations/executor.h"
#include "tests/support/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;

// One Kubernetes node, w-1, cordoned or not; records every cordon change asked of it.
class OneNodeKube final : public kube::KubeClient {
 public:
  explicit OneNodeKube(bool cordoned) : cordoned_(cordoned) {}
  absl::StatusOr<std::vector<kube::KubeNode>> ListNodes() override {
    ++lists;
    kube::KubeNode node;
    node.name = "w-1";
    node.ready = true;
    node.unschedulable = cordoned_;
    return std::vector<kube::KubeNode>{node};
  }
  absl::Status SetUnschedulable(const std::string& node, bool value) override {
    changes.push_back(node + (value ? " cordon" : " uncordon"));
    cordoned_ = value;
    return absl::OkStatus();
  }
  absl::Status SetPendingInstall(const std::string& node,
                                 const std::optional<std::string>& annotation) override {
    changes.push_back(node + " pending-install " + annotation.value_or("removed"));
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<kube::KubePod>> ListPodsOnNode(const std::string&) override {
    return std::vector<kube::KubePod>{};
  }
  absl::Status EvictPod(const std::string&, const std::string&) override {
    return absl::OkStatus();
  }

  std::vector<std::string> changes;
  int lists = 0;

 private:
  bool cordoned_;
};

class ExecutorCompletionTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("1.12.0", "1.12.0")));
    std::unique_ptr<TalosClient> client;
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client));
    talos_ = std::move(client);
    profile_.name = "prod";
    profile_.nodes.push_back({"w-1", Address("w-1"), core::NodeRole::kWorker});
  }

  // `seen_cordoned`: what the look that decided the completion saw.
  absl::StatusOr<ActionResult> Complete(std::shared_ptr<kube::KubeClient> kube,
                                        bool seen_cordoned = true) {
    FixedClusterClients clients(talos_, std::move(kube));
    TalosRolloutExecutor executor(clients, {}, Env::Default());
    core::RolloutDecision decision;
    decision.kind = core::ActionKind::kCompleteNode;
    decision.node = "w-1";
    decision.seen_cordoned = seen_cordoned;
    return executor.Execute(profile_, decision, {});
  }

  std::shared_ptr<TalosClient> talos_;
  core::ClusterProfile profile_;
};

TEST_F(ExecutorCompletionTest, UncordonsACordonedNode) {
  auto kube = std::make_shared<OneNodeKube>(/*cordoned=*/true);
  absl::StatusOr<ActionResult> done = Complete(kube);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->detail, "uncordoned w-1");
  EXPECT_THAT(kube->changes, ::testing::ElementsAre("w-1 uncordon"));
}

TEST_F(ExecutorCompletionTest, LeavesANodeTalosUncordonedAloneAndSaysSo) {
  auto kube = std::make_shared<OneNodeKube>(/*cordoned=*/false);
  absl::StatusOr<ActionResult> done = Complete(kube);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_THAT(done->detail, HasSubstr("schedulable already"));
  EXPECT_THAT(done->detail, ::testing::Not(HasSubstr("uncordoned")));
  EXPECT_TRUE(kube->changes.empty()) << "a call that changes nothing";
}

// The look that decided the completion saw the node schedulable: nothing is asked again.
TEST_F(ExecutorCompletionTest, TakesTheLooksWordForANodeSeenSchedulable) {
  auto kube = std::make_shared<OneNodeKube>(/*cordoned=*/false);
  absl::StatusOr<ActionResult> done = Complete(kube, /*seen_cordoned=*/false);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->detail, "w-1 schedulable already");
  EXPECT_EQ(kube->lists, 0);
  EXPECT_TRUE(kube->changes.empty());
}

}  // namespace
}  // namespace tr::reconciler::talos
