// NodeWatches and a Node's change of Ready: a look reads a node ready when its machine and its
// Node both are, so the Node's change wakes the cluster only when it can change that, and the
// machine's watch would not wake for what follows (node_watches.h). A scripted Talos client
// delivers the machine's statuses; a scripted Kubernetes client the Nodes' watch events.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>

#include "base/mutex.h"
#include "reconciler/operations/node_watches.h"
#include "resource/definitions/runtime/runtime.pb.h"
#include "tests/support/node_watch_only_kube.h"
#include "tests/support/simulated_env.h"
#include "tests/support/wait.h"
#include "tests/talos/scripted_client.h"

namespace tr::reconciler {
namespace {

using namespace std::chrono_literals;
using kube::KubeNode;
using kube::NodeWatchEvent;
using Stage = ::talos::resource::definitions::enums::RuntimeMachineStage;

constexpr char kAddress[] = "10.5.0.2";

// The watch event of a MachineStatus in `stage`, ready or not.
talos::CosiEvent StatusEvent(Stage stage, bool ready) {
  ::talos::resource::definitions::runtime::MachineStatusSpec spec;
  spec.set_stage(stage);
  spec.mutable_status()->set_ready(ready);
  talos::CosiEvent event;
  event.type = talos::CosiEventType::kUpdated;
  event.resource.proto_spec = spec.SerializeAsString();
  return event;
}

KubeNode Node(const std::string& name, bool ready, const std::string& address = kAddress) {
  KubeNode node;
  node.name = name;
  node.ready = ready;
  node.addresses = {address};
  return node;
}

// Lists the Nodes it is given, then sends each event pushed, in order, until stopped.
class PushedNodesClient final : public test_support::NodeWatchOnlyKube {
 public:
  explicit PushedNodesClient(std::vector<KubeNode> listed) : listed_(std::move(listed)) {}

  // Sends `event` and waits until the watch's callback returned from it (the informer applies
  // an event and calls its on_change within that callback).
  bool Send(NodeWatchEvent event) {
    MutexLock lock(mu_);
    event.resource_version = std::to_string(++version_);
    pushed_.push_back(std::move(event));
    const int sent = ++sent_;
    cv_.notify_all();
    return cv_.wait_for(lock, 20s,
                        [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return delivered_ >= sent; });
  }

  absl::StatusOr<kube::VersionedNodes> ListNodesVersioned() override {
    MutexLock lock(mu_);
    return kube::VersionedNodes{listed_, std::to_string(version_)};
  }
  absl::Status WatchNodes(const std::string&, std::chrono::seconds, std::stop_token stop,
                          const std::function<bool(const NodeWatchEvent&)>& on_event) override {
    while (true) {
      NodeWatchEvent next;
      {
        MutexLock lock(mu_);
        if (!cv_.wait(lock, stop,
                      [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return !pushed_.empty(); })) {
          return absl::CancelledError("stopped");
        }
        next = std::move(pushed_.front());
        pushed_.pop_front();
      }
      on_event(next);
      MutexLock lock(mu_);
      ++delivered_;
      cv_.notify_all();
    }
  }

 private:
  Mutex mu_;
  std::condition_variable_any cv_;
  std::vector<KubeNode> listed_ ABSL_GUARDED_BY(mu_);
  std::deque<NodeWatchEvent> pushed_ ABSL_GUARDED_BY(mu_);
  int version_ ABSL_GUARDED_BY(mu_) = 1;
  int sent_ ABSL_GUARDED_BY(mu_) = 0;
  int delivered_ ABSL_GUARDED_BY(mu_) = 0;
};

class NodeWatchesKubeTest : public ::testing::Test {
 protected:
  // The machine watched, its watch live with this status; its Node listed ready or not, and
  // the informer's list told (one wake).
  void Start(Stage stage, bool machine_ready, bool node_ready) {
    kube_ = std::make_shared<PushedNodesClient>(std::vector<KubeNode>{Node("w-1", node_ready)});
    watches_.Looked("prod");
    watches_.Ensure("prod", kAddress, talos_, talos::MachineStatus{});
    ASSERT_EQ(talos_->watches.size(), 1u);
    talos_->Deliver(0, StatusEvent(stage, machine_ready));
    ASSERT_TRUE(watches_.Find("prod", kAddress, talos_.get()).has_value());
    const int woken = wakes_.load();  // the first status may differ from the empty one asked
    EXPECT_FALSE(watches_.KubeNodes("prod", kube_).has_value());  // starts the informer
    ASSERT_TRUE(test_support::WaitUntil([&] { return wakes_.load() == woken + 1; }));
  }

  // How many wakes the Node's watch event brought: 0 or 1.
  int WakesOf(NodeWatchEvent::Type type, const KubeNode& node) {
    const int before = wakes_.load();
    EXPECT_TRUE(kube_->Send({type, node, ""}));
    return wakes_.load() - before;
  }

  test_support::SimulatedEnv env_{Env::TimePoint{} + 1000h};
  std::atomic<int> wakes_{0};
  std::shared_ptr<talos::ScriptedClient> talos_ = std::make_shared<talos::ScriptedClient>();
  std::shared_ptr<PushedNodesClient> kube_;
  // Last: destroyed first, which ends its watches and joins its informer.
  NodeWatches watches_{env_, [this](const std::string&) { wakes_.fetch_add(1); }, 60s};
};

// The machine is up and not ready: Talos waits for the Node's Ready (`nodeReady`), so the
// Node's Ready changes nothing a look reads; the machine's own ready, which follows, wakes.
TEST_F(NodeWatchesKubeTest, ANodesReadyWhileItsMachineIsNotReadyWakesNothing) {
  ASSERT_NO_FATAL_FAILURE(Start(Stage::MACHINE_STAGE_RUNNING, false, false));
  EXPECT_EQ(WakesOf(NodeWatchEvent::Type::kModified, Node("w-1", true)), 0);
  const int before = wakes_.load();
  talos_->Deliver(0, StatusEvent(Stage::MACHINE_STAGE_RUNNING, true));
  EXPECT_EQ(wakes_.load(), before + 1);
}

// The machine is ready: the Node's loss of Ready is news a look reads.
TEST_F(NodeWatchesKubeTest, ANodesLossWhileItsMachineIsReadyWakes) {
  ASSERT_NO_FATAL_FAILURE(Start(Stage::MACHINE_STAGE_RUNNING, true, true));
  EXPECT_EQ(WakesOf(NodeWatchEvent::Type::kModified, Node("w-1", false)), 1);
}

// The machine went down, and its watch's end woke: the Node's loss later is that fall again.
// Its Ready, once the machine is back and no watch follows it yet, wakes, and so does a loss
// after that: a new fall no watch told.
TEST_F(NodeWatchesKubeTest, AfterTheMachinesFallTheNodesLossWakesNothingAndItsReadyWakes) {
  ASSERT_NO_FATAL_FAILURE(Start(Stage::MACHINE_STAGE_RUNNING, true, true));
  const int before = wakes_.load();
  talos_->End(0, absl::UnavailableError("the node went down"));
  EXPECT_EQ(wakes_.load(), before + 1);
  EXPECT_EQ(WakesOf(NodeWatchEvent::Type::kModified, Node("w-1", false)), 0);
  EXPECT_EQ(WakesOf(NodeWatchEvent::Type::kModified, Node("w-1", true)), 1);
  EXPECT_EQ(WakesOf(NodeWatchEvent::Type::kModified, Node("w-1", false)), 1);
}

// A look while the machine is down starts its watch again (StartAndAwait), which fails: what
// the fall told holds for the new watch, the Node's loss wakes nothing and the look after it
// still reads the fall once; the watch that comes live once the machine is back ends that.
TEST_F(NodeWatchesKubeTest, AWatchStartedAgainWhileTheMachineIsDownKeepsItsFall) {
  ASSERT_NO_FATAL_FAILURE(Start(Stage::MACHINE_STAGE_RUNNING, true, true));
  talos_->End(0, absl::UnavailableError("the node went down"));
  // No wait: the test ends the watch itself.
  EXPECT_TRUE(
      absl::IsDeadlineExceeded(watches_.StartAndAwait("prod", kAddress, talos_, 0ms).status()));
  ASSERT_EQ(talos_->watches.size(), 2u);
  talos_->End(1, absl::UnavailableError("connection refused"));
  EXPECT_EQ(WakesOf(NodeWatchEvent::Type::kModified, Node("w-1", false)), 0);
  EXPECT_TRUE(watches_.TakeFall("prod", kAddress, talos_.get()));
  EXPECT_FALSE(watches_.TakeFall("prod", kAddress, talos_.get()));

  EXPECT_FALSE(watches_.StartAndAwait("prod", kAddress, talos_, 0ms).ok());
  ASSERT_EQ(talos_->watches.size(), 3u);
  const int before = wakes_.load();
  talos_->Deliver(2, StatusEvent(Stage::MACHINE_STAGE_RUNNING, true));
  EXPECT_EQ(wakes_.load(), before + 1) << "its ready, which no look waited for, woke nothing";
  EXPECT_EQ(WakesOf(NodeWatchEvent::Type::kModified, Node("w-1", true)), 1);
  EXPECT_EQ(WakesOf(NodeWatchEvent::Type::kModified, Node("w-1", false)), 1) << "a new fall";
}

// A machine going down (its upgrade began; Talos checks no readiness in UPGRADING, so it
// stays ready): its fall, the watch's end, wakes; the Node's loss before it does not.
TEST_F(NodeWatchesKubeTest, TheNodesLossWhileItsMachineGoesDownWakesNothing) {
  ASSERT_NO_FATAL_FAILURE(Start(Stage::MACHINE_STAGE_RUNNING, true, true));
  const int before = wakes_.load();
  talos_->Deliver(0, StatusEvent(Stage::MACHINE_STAGE_UPGRADING, true));
  EXPECT_EQ(wakes_.load(), before);
  EXPECT_EQ(WakesOf(NodeWatchEvent::Type::kModified, Node("w-1", false)), 0);
}

// A Node deleted, or one whose machine is not watched, wakes whatever the machine says.
TEST_F(NodeWatchesKubeTest, ADeletedNodeAndANodeOfNoWatchedMachineWake) {
  ASSERT_NO_FATAL_FAILURE(Start(Stage::MACHINE_STAGE_RUNNING, false, false));
  EXPECT_EQ(WakesOf(NodeWatchEvent::Type::kModified, Node("w-2", true, "10.5.0.3")), 1);
  EXPECT_EQ(WakesOf(NodeWatchEvent::Type::kDeleted, Node("w-1", false)), 1);
}

}  // namespace
}  // namespace tr::reconciler
