// NodeWatches and the boot id a look read before it started a node's watch: the watch knows it
// as its boot's only when its status is the instance the look asked for before the read
// (MachineStatus::created, one per boot), so a look after it does not read it again.
#include <gtest/gtest.h>

#include "reconciler/operations/node_watches.h"
#include "tests/support/simulated_env.h"
#include "tests/talos/scripted_client.h"

namespace tr::reconciler {
namespace {

using namespace std::chrono_literals;

constexpr char kNode[] = "10.5.0.2";

class NodeWatchesBootTest : public ::testing::Test {
 protected:
  // The look's status, asked before it read `boot_id`, then the watch it starts.
  std::optional<NodeWatches::Known> StartAfterLook(const std::string& asked_created,
                                                   const std::string& boot_id,
                                                   const std::string& watch_created) {
    // A look begins: a cluster never looked at is one the idle sweep may end at any time.
    watches_.Looked("prod");
    talos::MachineStatus asked;
    asked.stage = core::MachineStage::kRunning;
    asked.ready = true;
    asked.created = asked_created;
    watches_.Ensure("prod", kNode, client_, asked, boot_id);
    EXPECT_EQ(client_->watches.size(), 1u);
    if (client_->watches.empty()) return std::nullopt;
    client_->Deliver(0, talos::ReadyStatusMadeAt(watch_created));
    return watches_.Find("prod", kNode, client_.get());
  }

  test_support::SimulatedEnv env_{Env::TimePoint{} + 1000h};
  std::shared_ptr<talos::ScriptedClient> client_ = std::make_shared<talos::ScriptedClient>();
  NodeWatches watches_{env_, nullptr, 60s};
};

TEST_F(NodeWatchesBootTest, AWatchOfTheStatusTheLookAskedKnowsTheBootIdReadAfterIt) {
  std::optional<NodeWatches::Known> known =
      StartAfterLook("1764806400.000000123", "boot-a", "1764806400.000000123");
  ASSERT_TRUE(known.has_value());
  EXPECT_EQ(known->boot_id, "boot-a");
  EXPECT_TRUE(known->machine.RunningAndReady());
}

// The node booted again between the look's status and its watch: the id read in between may
// be either boot's, so the next look reads it again.
TEST_F(NodeWatchesBootTest, AWatchOfAStatusMadeAtAnotherBootDoesNotTakeTheBootId) {
  std::optional<NodeWatches::Known> known =
      StartAfterLook("1764806400.000000123", "boot-a", "1764806460.000000456");
  ASSERT_TRUE(known.has_value());
  EXPECT_EQ(known->boot_id, "");
}

// A status without its creation time (a client that does not say it) ties nothing.
TEST_F(NodeWatchesBootTest, WithoutTheCreationTimeNothingIsTied) {
  std::optional<NodeWatches::Known> known = StartAfterLook("", "boot-a", "");
  ASSERT_TRUE(known.has_value());
  EXPECT_EQ(known->boot_id, "");
}

// A boot id tied to a watch ends with it: the next watch, of a later boot, starts without it.
TEST_F(NodeWatchesBootTest, TheNextWatchOfTheNodeStartsWithoutTheBootId) {
  ASSERT_TRUE(StartAfterLook("1764806400.000000123", "boot-a", "1764806400.000000123"));
  client_->End(0, absl::UnavailableError("the node went down"));
  EXPECT_FALSE(watches_.Find("prod", kNode, client_.get()).has_value());
  talos::MachineStatus asked;
  watches_.Ensure("prod", kNode, client_, asked);
  ASSERT_EQ(client_->watches.size(), 2u);
  client_->Deliver(1, talos::ReadyStatusMadeAt("1764806460.000000456"));
  std::optional<NodeWatches::Known> known = watches_.Find("prod", kNode, client_.get());
  ASSERT_TRUE(known.has_value());
  EXPECT_EQ(known->boot_id, "");
}

// A watch that has sent no status yet gives the status the look that started it saw, while it
// is fresh; once it sent one (or ended) it is read as any watch is.
TEST_F(NodeWatchesBootTest, AStartingWatchGivesTheStatusItsLookSawWhileFresh) {
  watches_.Looked("prod");
  talos::MachineStatus asked;
  asked.stage = core::MachineStage::kRunning;
  asked.ready = true;
  asked.created = "1764806400.000000123";
  watches_.Ensure("prod", kNode, client_, asked, "boot-a");
  ASSERT_EQ(client_->watches.size(), 1u);
  EXPECT_FALSE(watches_.Find("prod", kNode, client_.get()).has_value());
  std::optional<talos::MachineStatus> seen = watches_.SeenAtStart("prod", kNode, client_.get(), 1s);
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->created, asked.created);
  EXPECT_TRUE(seen->RunningAndReady());
  EXPECT_FALSE(watches_.SeenAtStart("prod", "10.5.0.3", client_.get(), 1s).has_value());
  env_.Advance(1s);
  EXPECT_FALSE(watches_.SeenAtStart("prod", kNode, client_.get(), 1s).has_value()) << "stale";
  EXPECT_TRUE(watches_.SeenAtStart("prod", kNode, client_.get(), 2s).has_value());
  client_->Deliver(0, talos::ReadyStatusMadeAt(asked.created));
  EXPECT_FALSE(watches_.SeenAtStart("prod", kNode, client_.get(), 2s).has_value()) << "live";
  EXPECT_TRUE(watches_.Find("prod", kNode, client_.get()).has_value());
}

}  // namespace
}  // namespace tr::reconciler
