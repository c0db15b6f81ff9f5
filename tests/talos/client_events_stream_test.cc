// The real gRPC Talos client's started Events streams (StartEvents) against talos-sim over mutual
// TLS: the hello first, the node's events, the end at a reboot, and a cancel.
#include <gmock/gmock.h>

#include <optional>

#include "tests/support/sim_fixture.h"
#include "tests/support/wait.h"

namespace tr::reconciler::talos {
namespace {

// What one stream reported, as its callbacks saw it.
struct StreamSeen {
  std::vector<MachineEvent> events;
  std::optional<absl::Status> done;
  int done_calls = 0;
  bool event_after_done = false;
};

class ClientEventsStreamTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.11.6", "v1.11.6")));
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client_));
  }

  std::unique_ptr<TalosStream> Start(const std::string& node) {
    EventsCallbacks callbacks;
    callbacks.on_event = [this](const MachineEvent& event) {
      seen_.Change([&](StreamSeen& s) {
        s.event_after_done = s.event_after_done || s.done.has_value();
        s.events.push_back(event);
      });
    };
    callbacks.on_done = [this](const absl::Status& status) {
      seen_.Change([&](StreamSeen& s) {
        s.done = status;
        ++s.done_calls;
      });
    };
    return client_->StartEvents(node, EventsRequest{}, std::move(callbacks));
  }

  std::unique_ptr<TalosClient> client_;
  test_support::Watched<StreamSeen> seen_;
};

TEST_F(ClientEventsStreamTest, HelloFirstThenTheRebootsEventsThenUnavailable) {
  const std::string node = Address("w-1");
  auto stream = Start(node);
  ASSERT_TRUE(seen_.WaitFor([](const StreamSeen& s) { return !s.events.empty() || s.done; }));
  ASSERT_FALSE(seen_.Get().done.has_value()) << *seen_.Get().done;
  EXPECT_TRUE(std::holds_alternative<HelloEvent>(seen_.Get().events[0].payload));

  ASSERT_TRUE(client_->Reboot(node, RebootMode::kDefault).ok());
  ASSERT_TRUE(seen_.WaitFor([](const StreamSeen& s) { return s.done.has_value(); }));
  const StreamSeen ended = seen_.Get();
  // The node says it is rebooting before the stream ends with it.
  EXPECT_TRUE(std::any_of(ended.events.begin(), ended.events.end(), [](const MachineEvent& e) {
    const auto* machine = std::get_if<MachineStatusEvent>(&e.payload);
    return machine != nullptr && machine->status.stage == core::MachineStage::kRebooting;
  }));
  EXPECT_EQ(ended.done->code(), absl::StatusCode::kUnavailable) << *ended.done;
  EXPECT_THAT(std::string(ended.done->message()),
              ::testing::HasSubstr(fmt::format("talos Events on node {} via ", node)));
  EXPECT_EQ(ended.done_calls, 1);
  EXPECT_FALSE(ended.event_after_done);
}

TEST_F(ClientEventsStreamTest, DestroyingTheHandleCancelsTheStreamAndWaitsForItsEnd) {
  auto stream = Start(Address("cp-1"));
  ASSERT_TRUE(seen_.WaitFor([](const StreamSeen& s) { return !s.events.empty() || s.done; }));
  ASSERT_FALSE(seen_.Get().done.has_value()) << *seen_.Get().done;
  stream.reset();
  const StreamSeen seen = seen_.Get();
  ASSERT_TRUE(seen.done.has_value());
  EXPECT_EQ(seen.done->code(), absl::StatusCode::kCancelled) << *seen.done;
  EXPECT_EQ(seen.done_calls, 1);
}

}  // namespace
}  // namespace tr::reconciler::talos
