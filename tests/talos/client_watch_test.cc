// The real gRPC Talos client's COSI watches against talos-sim over mutual TLS: the bootstrapped
// list, the changes, the refusals and the ends.
#include <gmock/gmock.h>

#include <optional>

#include "reconciler/clients/talos/talos_answers.h"
#include "reconciler/clients/talos/talos_convert.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/wait.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;

constexpr char kMachineStatuses[] = "MachineStatuses.runtime.talos.dev";

// What one watch reported, as its callbacks saw it.
struct Seen {
  std::vector<CosiEvent> events;
  std::optional<absl::Status> done;
  int done_calls = 0;
  bool event_after_done = false;

  bool Bootstrapped() const {
    return std::any_of(events.begin(), events.end(),
                       [](const CosiEvent& e) { return e.type == CosiEventType::kBootstrapped; });
  }
};

class ClientWatchTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.11.6", "v1.11.6")));
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client_));
  }

  // Starts a watch of `client` (client_ when null) whose callbacks record into `seen_`.
  std::unique_ptr<CosiWatch> Watch(const std::string& node, CosiWatchRequest request,
                                   TalosClient* client = nullptr) {
    WatchCallbacks callbacks;
    callbacks.on_event = [this](const CosiEvent& event) {
      seen_.Change([&](Seen& s) {
        s.event_after_done = s.event_after_done || s.done.has_value();
        s.events.push_back(event);
      });
    };
    callbacks.on_done = [this](const absl::Status& status) {
      seen_.Change([&](Seen& s) {
        s.done = status;
        ++s.done_calls;
      });
    };
    return (client ? client : client_.get())->StartWatch(node, request, std::move(callbacks));
  }

  // A client whose endpoints are cp-1 then cp-2, with `node`'s API made unreachable.
  void ClientThroughTwoEndpoints(const std::string& node, std::unique_ptr<TalosClient>* client) {
    sim::Fault fault;
    fault.kind = sim::FaultKind::kApiUnreachable;
    ASSERT_TRUE(fleet_->InjectFault(node, fault).ok());
    TalosContext context;
    ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
    context.endpoints = {Endpoint{Address("cp-1"), kApidPort},
                         Endpoint{Address("cp-2"), kApidPort}};
    ASSERT_NO_FATAL_FAILURE(NewClientFor(context, client));
  }

  static MachineStatus StatusOf(const CosiEvent& event) {
    auto status = MachineStatusFromSpec(event.resource.proto_spec);
    EXPECT_TRUE(status.ok()) << status.status();
    return status.ok() ? *status : MachineStatus{};
  }

  std::unique_ptr<TalosClient> client_;
  test_support::Watched<Seen> seen_;
};

TEST_F(ClientWatchTest, BootstrappedListThenTheChangeThenUnavailableWhenTheNodeGoesDown) {
  const std::string node = Address("w-1");
  auto watch = Watch(node, {.namespace_name = "runtime", .type = kMachineStatuses, .id = {}});
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.Bootstrapped() || s.done; }));
  Seen listed = seen_.Get();
  ASSERT_FALSE(listed.done.has_value()) << *listed.done;
  ASSERT_EQ(listed.events.size(), 2u);
  EXPECT_EQ(listed.events[0].type, CosiEventType::kCreated);
  EXPECT_EQ(listed.events[0].resource.id, "machine");
  EXPECT_EQ(listed.events[0].resource.namespace_name, "runtime");
  EXPECT_TRUE(StatusOf(listed.events[0]).RunningAndReady());
  // The end of the list names the kind only.
  EXPECT_EQ(listed.events[1].type, CosiEventType::kBootstrapped);
  EXPECT_EQ(listed.events[1].resource.type, kMachineStatuses);
  EXPECT_EQ(listed.events[1].resource.id, "");

  ASSERT_TRUE(client_->Reboot(node, RebootMode::kDefault).ok());
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.done.has_value(); }));
  const Seen ended = seen_.Get();
  // The reboot's MachineStatus change arrives before the stream ends with the node.
  ASSERT_GT(ended.events.size(), 2u);
  const CosiEvent& change = ended.events[2];
  EXPECT_EQ(change.type, CosiEventType::kUpdated);
  EXPECT_EQ(StatusOf(change).stage, core::MachineStage::kRebooting);
  ASSERT_TRUE(change.old.has_value());
  EXPECT_EQ(change.old->version, listed.events[0].resource.version);
  EXPECT_NE(change.resource.version, change.old->version);
  EXPECT_EQ(ended.done->code(), absl::StatusCode::kUnavailable) << *ended.done;
  EXPECT_THAT(std::string(ended.done->message()),
              HasSubstr(fmt::format("talos cosi.State/Watch on node {} via ", node)));
  EXPECT_EQ(ended.done_calls, 1);
  EXPECT_FALSE(ended.event_after_done);
}

TEST_F(ClientWatchTest, OneResourceStartsWithItsStateOrATombstone) {
  const std::string node = Address("cp-2");
  auto watch =
      Watch(node, {.namespace_name = "runtime", .type = kMachineStatuses, .id = "machine"});
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return !s.events.empty() || s.done; }));
  Seen first = seen_.Get();
  ASSERT_EQ(first.events.size(), 1u);
  EXPECT_EQ(first.events[0].type, CosiEventType::kCreated);
  EXPECT_TRUE(StatusOf(first.events[0]).RunningAndReady());
  watch.reset();

  seen_.Change([](Seen& s) { s = Seen{}; });
  auto missing = Watch(node, {.namespace_name = "runtime", .type = kMachineStatuses, .id = "nope"});
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return !s.events.empty() || s.done; }));
  first = seen_.Get();
  ASSERT_EQ(first.events.size(), 1u);
  EXPECT_EQ(first.events[0].type, CosiEventType::kDestroyed);
  EXPECT_EQ(first.events[0].resource.id, "nope");
}

TEST_F(ClientWatchTest, AnUnknownTypeIsRefusedWithTheNodesWords) {
  const std::string node = Address("w-1");
  // Singular: no such type.
  auto watch = Watch(
      node, {.namespace_name = "runtime", .type = "MachineStatus.runtime.talos.dev", .id = {}});
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.done.has_value(); }));
  const Seen seen = seen_.Get();
  EXPECT_TRUE(seen.events.empty());
  EXPECT_EQ(seen.done->code(), absl::StatusCode::kPermissionDenied) << *seen.done;
  EXPECT_THAT(std::string(seen.done->message()),
              HasSubstr("resource type \"MachineStatus.runtime.talos.dev\" is not supported"));
}

TEST_F(ClientWatchTest, CancelEndsTheWatchAndTheHandleWaitsForTheEnd) {
  const std::string node = Address("cp-1");
  auto watch = Watch(node, {.namespace_name = "runtime", .type = kMachineStatuses, .id = {}});
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.Bootstrapped() || s.done; }));
  ASSERT_FALSE(seen_.Get().done.has_value());
  watch->Cancel();
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.done.has_value(); }));
  EXPECT_EQ(seen_.Get().done->code(), absl::StatusCode::kCancelled) << *seen_.Get().done;
  watch.reset();
  EXPECT_EQ(seen_.Get().done_calls, 1);

  // Destroying a live watch's handle cancels it and returns once on_done has run.
  seen_.Change([](Seen& s) { s = Seen{}; });
  auto live = Watch(node, {.namespace_name = "runtime", .type = kMachineStatuses, .id = {}});
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.Bootstrapped() || s.done; }));
  live.reset();
  const Seen after = seen_.Get();
  ASSERT_TRUE(after.done.has_value());
  EXPECT_EQ(after.done->code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(after.done_calls, 1);
}

TEST_F(ClientWatchTest, AnEndpointThatCannotServeItIsPassedOverUntilTheWatchIsEstablished) {
  std::unique_ptr<TalosClient> client;
  ASSERT_NO_FATAL_FAILURE(ClientThroughTwoEndpoints("cp-1", &client));
  auto watch =
      Watch(Address("w-1"), {.namespace_name = "runtime", .type = kMachineStatuses, .id = {}},
            client.get());
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.Bootstrapped() || s.done; }));
  ASSERT_FALSE(seen_.Get().done.has_value()) << *seen_.Get().done;
  // cp-1, tried first, turned it down (the simulator journals a refusal under the endpoint).
  const auto refused = Calls("cp-1", "/cosi.resource.State/Watch");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].code, "UNAVAILABLE");
  watch.reset();
  // The end names the endpoint that served the watch.
  const Seen seen = seen_.Get();
  EXPECT_EQ(seen.done->code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(std::string(seen.done->message()),
              HasSubstr(fmt::format("via {}:", Address("cp-2"))));
}

TEST_F(ClientWatchTest, AWatchOfANodeTheEndpointCannotDialEndsThereAndTheNextStartsAtTheNext) {
  std::unique_ptr<TalosClient> client;
  ASSERT_NO_FATAL_FAILURE(ClientThroughTwoEndpoints("w-1", &client));
  const CosiWatchRequest request{.namespace_name = "runtime", .type = kMachineStatuses, .id = {}};
  auto watch = Watch(Address("w-1"), request, client.get());
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.done.has_value(); }));
  EXPECT_EQ(HostApidCouldNotDial(*seen_.Get().done), Address("w-1")) << *seen_.Get().done;
  EXPECT_EQ(Calls("cp-1", "/cosi.resource.State/Watch").size(), 1u);
  EXPECT_EQ(Calls("cp-2", "/cosi.resource.State/Watch").size(), 0u);
  watch.reset();
  seen_.Change([](Seen& s) { s = Seen{}; });
  auto again = Watch(Address("w-1"), request, client.get());
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.done.has_value(); }));
  EXPECT_EQ(Calls("cp-1", "/cosi.resource.State/Watch").size(), 1u);
  EXPECT_EQ(Calls("cp-2", "/cosi.resource.State/Watch").size(), 1u);
}

// A control plane's watch goes through its own apid: the reboot of the control plane that
// forwards the other calls does not end it. (Through cp-1 it would end with cp-1's reboot.)
TEST_F(ClientWatchTest, AControlPlanesWatchGoesThroughItselfAndOutlivesAnothersReboot) {
  TalosContext context;
  ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
  context.endpoints = {Endpoint{Address("cp-1"), kApidPort}, Endpoint{Address("cp-2"), kApidPort}};
  std::unique_ptr<TalosClient> client;
  ASSERT_NO_FATAL_FAILURE(NewClientFor(context, &client));
  auto watch =
      Watch(Address("cp-2"), {.namespace_name = "runtime", .type = kMachineStatuses, .id = {}},
            client.get());
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.Bootstrapped() || s.done; }));
  ASSERT_FALSE(seen_.Get().done.has_value()) << *seen_.Get().done;
  ASSERT_TRUE(client->Reboot(Address("cp-1"), RebootMode::kDefault).ok());
  ASSERT_TRUE(test_support::WaitUntil([&] { return Snapshot("cp-1").boots == 2; }));
  EXPECT_FALSE(seen_.Get().done.has_value()) << "ended by cp-1's reboot: " << *seen_.Get().done;
  watch.reset();
  EXPECT_EQ(seen_.Get().done->code(), absl::StatusCode::kCancelled);
  // The simulator journals a watch once it has seen it end: one, cp-2 serving it itself.
  std::vector<sim::JournalEntry> served;
  ASSERT_TRUE(test_support::WaitUntil([&] {
    served = Calls("cp-2", "/cosi.resource.State/Watch");
    return !served.empty();
  }));
  ASSERT_EQ(served.size(), 1u);
  EXPECT_EQ(served[0].endpoint, "") << "forwarded, not served by cp-2 itself";
  EXPECT_EQ(served[0].code, "CANCELLED");
}

TEST_F(ClientWatchTest, TheProcessShutdownEndsEveryWatch) {
  TalosContext context;
  ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
  std::stop_source shutdown;
  GrpcTalosClientOptions options = TestClientOptions();
  options.shutdown = shutdown.get_token();
  auto client = NewGrpcTalosClient(context, Env::Default(), options);
  ASSERT_TRUE(client.ok()) << client.status();
  auto watch =
      Watch(Address("w-1"), {.namespace_name = "runtime", .type = kMachineStatuses, .id = {}},
            client->get());
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.Bootstrapped() || s.done; }));
  ASSERT_FALSE(seen_.Get().done.has_value()) << *seen_.Get().done;
  shutdown.request_stop();
  ASSERT_TRUE(seen_.WaitFor([](const Seen& s) { return s.done.has_value(); }));
  EXPECT_EQ(seen_.Get().done->code(), absl::StatusCode::kCancelled);

  // After the shutdown a watch ends before it starts.
  seen_.Change([](Seen& s) { s = Seen{}; });
  auto late =
      Watch(Address("w-1"), {.namespace_name = "runtime", .type = kMachineStatuses, .id = {}},
            client->get());
  const Seen seen = seen_.Get();
  ASSERT_TRUE(seen.done.has_value());
  EXPECT_EQ(seen.done->code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(seen.events.empty());
}

}  // namespace
}  // namespace tr::reconciler::talos
