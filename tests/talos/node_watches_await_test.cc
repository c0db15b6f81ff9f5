// NodeWatches::StartAndAwait: a look at a node with no live watch starts the watch and reads its
// first status instead of asking the node; what it returns when the watch is refused, ends or
// sends nothing in time, and that a status the look waited for wakes nothing while one that came
// after the wait does.
#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "reconciler/operations/node_watches.h"
#include "tests/support/simulated_env.h"
#include "tests/talos/scripted_client.h"

namespace tr::reconciler {
namespace {

using namespace std::chrono_literals;

constexpr char kAwaitedNode[] = "10.5.0.2";

talos::CosiEvent ReadyStatusEvent() { return talos::ReadyStatusMadeAt("1764806400.000000123"); }

class NodeWatchesAwaitTest : public ::testing::Test {
 protected:
  NodeWatchesAwaitTest() { watches_.Looked("prod"); }

  // StartAndAwait on another thread; returns once it waits for the watch it started (two
  // threads wait in the env then: it, and the idle closer's sweep, which NodeWatches registers).
  std::future<absl::StatusOr<NodeWatches::Known>> Await(std::chrono::milliseconds within = 5s) {
    auto awaited = std::async(std::launch::async, [this, within] {
      return watches_.StartAndAwait("prod", kAwaitedNode, client_, within);
    });
    EXPECT_TRUE(env_.Settle(2)) << "it never waited";
    return awaited;
  }

  test_support::SimulatedEnv env_{Env::TimePoint{} + 1000h};
  std::shared_ptr<talos::ScriptedClient> client_ = std::make_shared<talos::ScriptedClient>();
  std::atomic<int> wakes_{0};
  NodeWatches watches_{env_, [this](const std::string&) { wakes_.fetch_add(1); }, 60s};
};

TEST_F(NodeWatchesAwaitTest, TheFirstStatusIsWhatTheLookReadsAndWakesNothing) {
  auto awaited = Await();
  ASSERT_EQ(client_->watches.size(), 1u);
  client_->Deliver(0, ReadyStatusEvent());
  absl::StatusOr<NodeWatches::Known> known = awaited.get();
  ASSERT_TRUE(known.ok()) << known.status();
  EXPECT_TRUE(known->machine.RunningAndReady());
  EXPECT_EQ(known->boot_id, "");
  EXPECT_EQ(wakes_.load(), 0) << "the look that waited for it was woken too";
  EXPECT_TRUE(watches_.Find("prod", kAwaitedNode, client_.get()).has_value());
  // Live now: the next look reads it with no new watch.
  EXPECT_TRUE(watches_.StartAndAwait("prod", kAwaitedNode, client_, 5s).ok());
  EXPECT_EQ(client_->watches.size(), 1u);
}

// The node is down: the watch ends at once, and the look reads the node as asking would have.
TEST_F(NodeWatchesAwaitTest, AWatchThatEndsGivesWhyAndTheNextLookStartsAnother) {
  auto awaited = Await();
  client_->End(0, absl::UnavailableError("connection refused"));
  absl::StatusOr<NodeWatches::Known> known = awaited.get();
  EXPECT_TRUE(absl::IsUnavailable(known.status())) << known.status();
  auto again = Await();
  ASSERT_EQ(client_->watches.size(), 2u);
  client_->Deliver(1, ReadyStatusEvent());
  EXPECT_TRUE(again.get().ok());
}

// Refused for good on this client: said so, and no watch is started again (the look asks).
TEST_F(NodeWatchesAwaitTest, ARefusedWatchIsNotStartedAgain) {
  auto awaited = Await();
  client_->End(0, absl::PermissionDeniedError("not authorized"));
  EXPECT_TRUE(absl::IsPermissionDenied(awaited.get().status()));
  absl::StatusOr<NodeWatches::Known> again =
      watches_.StartAndAwait("prod", kAwaitedNode, client_, 5s);
  EXPECT_TRUE(absl::IsFailedPrecondition(again.status())) << again.status();
  EXPECT_EQ(client_->watches.size(), 1u);
}

// Nothing within the wait: DeadlineExceeded (the look reads the node as not answering); the
// status that comes later is news, and wakes the cluster.
TEST_F(NodeWatchesAwaitTest, NoStatusInTimeIsADeadlineAndALaterReadyOneWakes) {
  auto awaited = Await(2s);
  env_.Advance(2s);
  EXPECT_TRUE(absl::IsDeadlineExceeded(awaited.get().status()));
  client_->Deliver(0, ReadyStatusEvent());
  EXPECT_EQ(wakes_.load(), 1);
  EXPECT_TRUE(watches_.Find("prod", kAwaitedNode, client_.get()).has_value());
}

}  // namespace
}  // namespace tr::reconciler
