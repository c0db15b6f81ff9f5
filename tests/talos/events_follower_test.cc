#include "reconciler/clients/talos/events_follower.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <optional>

#include "tests/support/simulated_env.h"
#include "tests/talos/scripted_client.h"

namespace tr::reconciler::talos {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

MachineEvent Hello() { return {"", "", HelloEvent{}}; }
MachineEvent Status(core::MachineStage stage, bool ready, std::string actor = "") {
  return {"id", std::move(actor), MachineStatusEvent{{stage, ready, {}, ""}}};
}
MachineEvent Sequence(std::string name, SequenceAction action, std::string actor,
                      std::optional<ErrorCode> error = std::nullopt) {
  return {"id", std::move(actor), SequenceEvent{std::move(name), action, error, "boom"}};
}

class EventsFollowerTest : public ::testing::Test {
 protected:
  FollowOptions Options() {
    FollowOptions options;
    options.start = [this]() -> absl::StatusOr<std::string> {
      ++starts;
      started_after_hello = client.hello_delivered;
      return std::string("actor-1");
    };
    options.deadline = clock.Now() + std::chrono::seconds(60);
    options.initial_backoff = milliseconds(100);
    options.max_backoff = milliseconds(300);
    options.on_event = [this](const MachineEvent&) { ++observed; };
    return options;
  }
  absl::StatusOr<FollowResult> Follow(const FollowOptions& options, std::stop_token stop = {}) {
    EventsFollower follower(client, clock);
    return follower.FollowUntilReady("10.0.0.2", options, stop);
  }

  ScriptedClient client;
  EventsFollowerTest() { clock.uniforms = {0.5}; }

  tr::test_support::SimulatedEnv clock;  // time moves only when the follower sleeps
  int starts = 0;
  bool started_after_hello = false;
  int observed = 0;
};

using core::MachineStage;

TEST_F(EventsFollowerTest, FollowsALegacyUpgradeAcrossTheReboot) {
  client.script = {
      {{Hello(), Sequence("upgrade", SequenceAction::kStart, "actor-1"),
        Status(MachineStage::kRunning, true, ""),  // another actor's: ignored before the break
        Sequence("boot", SequenceAction::kNoop, "other", ErrorCode::kFatal),  // ignored too
        Status(MachineStage::kRunning, true, "actor-1"),  // before the reboot: does not count
        Status(MachineStage::kRebooting, false, "actor-1")}},
      {{}, absl::UnavailableError("connection refused")},
      {{}, absl::UnavailableError("connection refused")},
      {{Hello(), Status(MachineStage::kBooting, false), Status(MachineStage::kRunning, false),
        Status(MachineStage::kRunning, true)},
       absl::OkStatus()},
  };
  client.boot_ids = {std::string("new-boot")};
  FollowOptions options = Options();
  options.boot_id_before = "old-boot";
  auto result = Follow(options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(starts, 1);
  EXPECT_TRUE(started_after_hello);
  EXPECT_EQ(result->actor_id, "actor-1");
  EXPECT_EQ(result->subscriptions, 4);
  EXPECT_EQ(result->boot_id, "new-boot");
  EXPECT_TRUE(result->status.RunningAndReady());
  EXPECT_EQ(result->events, 6);  // 3 of actor-1 before, 3 after the reboot
  EXPECT_EQ(observed, 6);
  EXPECT_THAT(client.tail_events, ElementsAre(0, -1, -1, -1));
  // Backoff doubles while the node is down and is capped; jittered, at Uniform() = 0.5 three
  // quarters of 100, 200, 300 (the cap).
  EXPECT_THAT(clock.slept, ElementsAre(milliseconds(75), milliseconds(150), milliseconds(225)));
}

TEST_F(EventsFollowerTest, SameBootIdKeepsWaitingForTheRealReboot) {
  client.script = {
      {{Hello(), Status(MachineStage::kUpgrading, false, "actor-1")}},
      {{Hello(), Status(MachineStage::kRunning, true)}},  // stream glitch, no reboot
      {{Hello(), Status(MachineStage::kRunning, true)}, absl::OkStatus()},
  };
  client.boot_ids = {std::string("old-boot"), std::string("new-boot")};
  FollowOptions options = Options();
  options.boot_id_before = "old-boot";
  auto result = Follow(options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->boot_id, "new-boot");
  EXPECT_EQ(result->subscriptions, 3);
  // A subscription that delivered its hello resets the backoff.
  EXPECT_THAT(clock.slept, ElementsAre(milliseconds(75), milliseconds(75)));
}

TEST_F(EventsFollowerTest, BootIdPermissionDeniedSkipsTheCheck) {
  client.script = {{{Hello()}}, {{Hello(), Status(MachineStage::kRunning, true)}}};
  client.boot_ids = {absl::PermissionDeniedError("reader")};
  FollowOptions options = Options();
  options.boot_id_before = "old-boot";
  auto result = Follow(options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->boot_id, "");
}

TEST_F(EventsFollowerTest, SequenceErrorOfTheActorFails) {
  client.script = {
      {{Hello(), Sequence("upgrade", SequenceAction::kNoop, "actor-1", ErrorCode::kFatal)}}};
  auto result = Follow(Options());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("node 10.0.0.2: sequence upgrade failed: boom"));
}

TEST_F(EventsFollowerTest, LockedSequenceIsUnavailable) {
  client.script = {
      {{Hello(), Sequence("upgrade", SequenceAction::kNoop, "actor-1", ErrorCode::kLocked)}}};
  EXPECT_EQ(Follow(Options()).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(EventsFollowerTest, SequenceErrorAfterTheRebootFailsWhateverTheActor) {
  client.script = {{{Hello()}},
                   {{Hello(), Sequence("boot", SequenceAction::kNoop, "", ErrorCode::kFatal)}}};
  EXPECT_EQ(Follow(Options()).status().code(), absl::StatusCode::kAborted);
}

TEST_F(EventsFollowerTest, DeadlineNamesTheLastStage) {
  client.script = {{{Hello(), Status(MachineStage::kRebooting, false, "actor-1")}}};
  for (int i = 0; i < 1000; ++i) client.script.push_back({{}, absl::UnavailableError("down")});
  FollowOptions options = Options();
  options.deadline = clock.Now() + std::chrono::seconds(2);
  auto result = Follow(options);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("last stage REBOOTING"));
}

TEST_F(EventsFollowerTest, NonBreakErrorsAreReturnedAsIs) {
  client.script = {{{Hello()}}, {{}, absl::PermissionDeniedError("not allowed")}};
  EXPECT_EQ(Follow(Options()).status().code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(EventsFollowerTest, UnreachableBeforeStartDoesNotStart) {
  client.script = {{{}, absl::UnavailableError("no endpoint reachable")}};
  EXPECT_EQ(Follow(Options()).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(starts, 0);
}

TEST_F(EventsFollowerTest, StartErrorIsReturned) {
  client.script = {{{Hello()}}};
  FollowOptions options = Options();
  options.start = [] { return absl::StatusOr<std::string>(absl::UnknownError("etcd says no")); };
  auto result = Follow(options);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(client.script.size(), 0u);
}

TEST_F(EventsFollowerTest, AlreadyStartedOperationAsksForBufferedEvents) {
  client.script = {{{Hello(), Status(MachineStage::kRunning, true, "actor-9")}},
                   {{Hello(), Status(MachineStage::kRunning, true)}}};
  FollowOptions options = Options();
  options.start = nullptr;
  options.actor_id = "actor-9";
  auto result = Follow(options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(client.tail_events, ElementsAre(-1, -1));
}

TEST_F(EventsFollowerTest, WithoutExpectedRebootFirstReadyIsDone) {
  client.script = {{{Hello(), Status(MachineStage::kBooting, false, "actor-1"),
                     Status(MachineStage::kRunning, true, "actor-1")}}};
  FollowOptions options = Options();
  options.expect_reboot = false;
  auto result = Follow(options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->subscriptions, 1);
}

TEST_F(EventsFollowerTest, StopCancels) {
  std::stop_source stop;
  client.script = {{{Hello(), Status(MachineStage::kUpgrading, false, "actor-1"),
                     Status(MachineStage::kRebooting, false, "actor-1")}}};
  FollowOptions options = Options();
  options.on_event = [&](const MachineEvent&) { stop.request_stop(); };
  EXPECT_EQ(Follow(options, stop.get_token()).status().code(), absl::StatusCode::kCancelled);
}

// A client without started streams (the default StartEvents) ends one at once: a caller falls
// back to what it does without events.
TEST(StartEventsDefaultTest, AClientWithoutStartedStreamsEndsOneAtOnceUnimplemented) {
  ScriptedClient client;
  std::optional<absl::Status> done;
  int events = 0;
  EventsCallbacks callbacks;
  callbacks.on_event = [&](const MachineEvent&) { ++events; };
  callbacks.on_done = [&](const absl::Status& status) { done = status; };
  // The base class's: the scripted client plays its own.
  auto stream = client.TalosClient::StartEvents("10.0.0.1", EventsRequest{}, std::move(callbacks));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->code(), absl::StatusCode::kUnimplemented) << *done;
  EXPECT_THAT(std::string(done->message()), HasSubstr("talos Events on node 10.0.0.1"));
  EXPECT_EQ(events, 0);
  stream.reset();  // a handle of an ended stream is released at once
}

}  // namespace
}  // namespace tr::reconciler::talos
