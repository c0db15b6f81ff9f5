// NodeInformer against talos-sim's fake Kubernetes API: one list, then the watch keeps the
// Nodes current — a write by another client and a power cut show without another list — and a
// watch the server ends is taken up again from where it was.
#include "reconciler/clients/kube/node_informer.h"

#include <gmock/gmock.h>

#include <atomic>
#include <string>

#include "base/mutex.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/wait.h"

namespace tr::reconciler::talos {
namespace {

using kube::KubeNode;
using kube::NodeInformer;
using Nodes = std::optional<std::vector<KubeNode>>;
using namespace std::chrono_literals;

const KubeNode* Named(const Nodes& nodes, const std::string& name) {
  if (!nodes) return nullptr;
  for (const KubeNode& node : *nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

class NodeInformerTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.13.2", "v1.13.2")));
    std::unique_ptr<kube::KubeClient> watching, writing;
    ASSERT_NO_FATAL_FAILURE(NewKubeClient("prod", &watching));
    ASSERT_NO_FATAL_FAILURE(NewKubeClient("prod", &writing));
    watching_ = std::move(watching);
    writing_ = std::move(writing);
  }
  void TearDown() override {
    informer_.reset();
    watching_.reset();
    writing_.reset();  // their kept-alive connections would hold the server's stop
    SimTest::TearDown();
  }
  void Start(std::chrono::seconds watch_timeout) {
    kube::NodeInformerOptions options;
    options.watch_timeout = watch_timeout;
    informer_ = std::make_unique<NodeInformer>(watching_, env_, options);
  }
  std::shared_ptr<kube::KubeClient> watching_, writing_;
  std::unique_ptr<NodeInformer> informer_;
};

// A cache behind the writer's own write answers nothing for it, and once the watch brought
// the write it does. A list and a Node's Ready changing are told (on_change), a cordon not.
TEST_F(NodeInformerTest, NodesSinceAWriteWaitForItAndReadinessIsTold) {
  std::atomic<int> told{0};
  std::atomic<int> lists_told{0};
  Mutex told_mu;
  std::vector<kube::NodeWatchEvent> events_told;
  kube::NodeInformerOptions options;
  options.on_change = [&](const kube::NodeWatchEvent* event) {
    if (event == nullptr) {
      lists_told.fetch_add(1);
    } else {
      MutexLock lock(told_mu);
      events_told.push_back(*event);
    }
    told.fetch_add(1);
  };
  informer_ = std::make_unique<NodeInformer>(watching_, env_, options);
  ASSERT_TRUE(informer_->WaitUntil(
      [](const NodeInformer::Counts& c, const Nodes& nodes) { return c.watches == 1 && nodes; },
      20s));
  EXPECT_EQ(told.load(), 1);  // the list
  EXPECT_EQ(lists_told.load(), 1);
  EXPECT_TRUE(informer_->NodesSince("").has_value());
  EXPECT_FALSE(informer_->NodesSince("not-a-number").has_value());
  EXPECT_EQ(writing_->LastNodeWriteVersion(), "");

  ASSERT_TRUE(writing_->SetUnschedulable("w-1", true).ok());
  const std::string written = writing_->LastNodeWriteVersion();
  ASSERT_FALSE(written.empty());
  EXPECT_FALSE(informer_->NodesSince(std::to_string(std::stoull(written) + 1000)).has_value());
  ASSERT_TRUE(test_support::WaitUntil([&] { return informer_->NodesSince(written).has_value(); }));
  EXPECT_TRUE(Named(informer_->NodesSince(written), "w-1")->unschedulable);

  sim::Fault cut;
  cut.kind = sim::FaultKind::kPowerCycle;
  cut.count = 1;
  ASSERT_TRUE(fleet_->InjectFault("w-1", cut).ok());
  ASSERT_TRUE(test_support::WaitUntil([&] { return told.load() >= 2; }));  // NotReady
  EXPECT_FALSE(Named(informer_->Nodes(), "w-1")->ready);
  {
    MutexLock lock(told_mu);  // the event told carries the Node as it is now
    ASSERT_FALSE(events_told.empty());
    EXPECT_EQ(events_told.front().type, kube::NodeWatchEvent::Type::kModified);
    EXPECT_EQ(events_told.front().node.name, "w-1");
    EXPECT_FALSE(events_told.front().node.ready);
  }
  EXPECT_EQ(lists_told.load(), 1);
  EXPECT_TRUE(Named(informer_->Nodes(), "w-1")->unschedulable);
}

TEST_F(NodeInformerTest, OneListThenTheWatchKeepsTheNodesCurrent) {
  Start(300s);
  ASSERT_TRUE(informer_->WaitUntil(
      [](const NodeInformer::Counts& c, const Nodes& nodes) { return c.watches == 1 && nodes; },
      20s))
      << "never listed and watching";
  EXPECT_EQ(informer_->Nodes()->size(), 4u);
  EXPECT_FALSE(Named(informer_->Nodes(), "w-1")->unschedulable);

  ASSERT_TRUE(writing_->SetUnschedulable("w-1", true).ok());
  EXPECT_TRUE(informer_->WaitUntil(
      [](const NodeInformer::Counts&, const Nodes& nodes) {
        return Named(nodes, "w-1") && Named(nodes, "w-1")->unschedulable;
      },
      20s))
      << "the cordon did not reach the cache";

  // A power cut has no write of its own; the Node still goes NotReady and comes back.
  sim::Fault cut;
  cut.kind = sim::FaultKind::kPowerCycle;
  cut.count = 1;
  ASSERT_TRUE(fleet_->InjectFault("cp-3", cut).ok());
  EXPECT_TRUE(informer_->WaitUntil(
      [](const NodeInformer::Counts&, const Nodes& nodes) {
        return Named(nodes, "cp-3") && !Named(nodes, "cp-3")->ready;
      },
      20s))
      << "cp-3 going down did not reach the cache";
  EXPECT_TRUE(informer_->WaitUntil(
      [](const NodeInformer::Counts&, const Nodes& nodes) {
        return Named(nodes, "cp-3") && Named(nodes, "cp-3")->ready;
      },
      20s))
      << "cp-3 coming back did not reach the cache";

  const NodeInformer::Counts counts = informer_->counts();
  EXPECT_EQ(counts.lists, 1) << "listed again although the watch held";
  EXPECT_EQ(counts.watches, 1);
  EXPECT_EQ(counts.failures, 0);
  EXPECT_GE(counts.events, 3);
}

TEST_F(NodeInformerTest, AWatchTheServerEndsIsTakenUpAgainWithoutAList) {
  Start(1s);
  ASSERT_TRUE(informer_->WaitUntil(
      [](const NodeInformer::Counts& c, const Nodes& nodes) { return c.watches >= 2 && nodes; },
      20s))
      << "the watch the server ended at its timeout was not taken up again";
  ASSERT_TRUE(writing_->SetUnschedulable("cp-1", true).ok());
  EXPECT_TRUE(informer_->WaitUntil(
      [](const NodeInformer::Counts&, const Nodes& nodes) {
        return Named(nodes, "cp-1") && Named(nodes, "cp-1")->unschedulable;
      },
      20s));
  EXPECT_EQ(informer_->counts().lists, 1);
  EXPECT_EQ(informer_->counts().failures, 0);
}

}  // namespace
}  // namespace tr::reconciler::talos
