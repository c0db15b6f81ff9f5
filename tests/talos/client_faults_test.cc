// The real gRPC Talos client against talos-sim's scripted faults: each fault surfaces with the
// code and text the reconciler acts on.
#include <gmock/gmock.h>

#include "reconciler/clients/talos/talos_answers.h"
#include "tests/support/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;

constexpr char kTarget[] = "ghcr.io/siderolabs/installer:v1.12.4";

std::string Message(const absl::Status& status) { return std::string(status.message()); }

// Parameter: whether a down node refuses connections (true) or answers UNAVAILABLE (false).
class ClientFaultTest : public SimTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.11.6", "v1.13.0"), GetParam()));
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client_));
  }

  void Inject(const std::string& node, sim::FaultKind kind, int count = -1,
              std::chrono::milliseconds delay = {}) {
    sim::Fault fault;
    fault.kind = kind;
    fault.count = count;
    fault.delay = delay;
    ASSERT_TRUE(fleet_->InjectFault(node, fault).ok());
  }

  // A client of "prod" whose endpoints are `nodes`, in that order.
  void ClientThrough(const std::vector<std::string>& nodes, std::unique_ptr<TalosClient>* client) {
    TalosContext context;
    ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
    context.endpoints.clear();
    for (const std::string& node : nodes) context.endpoints.push_back({Address(node), kApidPort});
    ASSERT_NO_FATAL_FAILURE(NewClientFor(context, client));
  }

  absl::StatusOr<UpgradeAck> Upgrade(const std::string& node) {
    LegacyUpgradeRequest request;
    request.image = kTarget;
    return client_->Upgrade(Address(node), request);
  }

  // Legacy upgrade of `node`, followed until ready or `deadline` passes.
  absl::StatusOr<FollowResult> UpgradeAndFollow(const std::string& node,
                                                std::chrono::milliseconds deadline) {
    const std::string address = Address(node);
    auto before = client_->BootId(address);
    if (!before.ok()) return before.status();
    EventsFollower follower(*client_, env_);
    FollowOptions options = Follow([&]() -> absl::StatusOr<std::string> {
      auto ack = Upgrade(node);
      if (!ack.ok()) return ack.status();
      return ack->actor_id;
    });
    options.boot_id_before = *before;
    options.deadline = env_.Now() + deadline;
    return follower.FollowUntilReady(address, options, {});
  }

  std::unique_ptr<TalosClient> client_;
};

TEST_P(ClientFaultTest, BadInstallerImageIsTheNodesOwnError) {
  ASSERT_NO_FATAL_FAILURE(Inject("cp-2", sim::FaultKind::kBadInstallerImage, 1));
  auto ack = Upgrade("cp-2");
  EXPECT_EQ(ack.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(Message(ack.status()),
              HasSubstr(fmt::format("talos Upgrade on node {} via ", Address("cp-2"))));
  EXPECT_THAT(Message(ack.status()),
              HasSubstr(fmt::format("error validating installer image \"{}\"", kTarget)));
  EXPECT_EQ(Snapshot("cp-2").talos_tag, "v1.11.6");
}

TEST_P(ClientFaultTest, BadImageOnTheLifecyclePath) {
  ASSERT_NO_FATAL_FAILURE(Inject("w-1", sim::FaultKind::kBadInstallerImage));
  const std::string image = "ghcr.io/siderolabs/installer:v1.13.9";
  auto pulled = client_->PullImage(Address("w-1"), core::InstallerStore::kSystem, image);
  EXPECT_EQ(pulled.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(pulled.status()), HasSubstr("error pulling image: failed to pull image"));
  // Nothing was pulled, and the install does not pull.
  auto installed =
      client_->LifecycleUpgrade(Address("w-1"), image, core::InstallerStore::kSystem, {});
  EXPECT_EQ(installed.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(Message(installed.status()),
              HasSubstr(fmt::format("talos LifecycleService/Upgrade on node {}", Address("w-1"))));
  EXPECT_THAT(Message(installed.status()), HasSubstr("not found in containerd store"));
  EXPECT_EQ(Snapshot("w-1").next_boot_slot, "");
}

TEST_P(ClientFaultTest, NonInstallerImageExitsNonZero) {
  // The installer's non-zero exit code arrives as a normal message; the client makes it an error.
  const std::string image = "ghcr.io/siderolabs/kubelet:v1.35.0";
  ASSERT_TRUE(client_->PullImage(Address("w-1"), core::InstallerStore::kSystem, image).ok());
  auto installed =
      client_->LifecycleUpgrade(Address("w-1"), image, core::InstallerStore::kSystem, {});
  EXPECT_EQ(installed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(installed.status()),
              HasSubstr("installer exited with code 1: error: " + image));
  EXPECT_EQ(Snapshot("w-1").next_boot_slot, "");
}

TEST_P(ClientFaultTest, BootFailureComesBackOnTheOldVersion) {
  ASSERT_NO_FATAL_FAILURE(Inject("cp-3", sim::FaultKind::kBootFailure, 1));
  FollowResult result;
  TR_ASSERT_OK_AND_ASSIGN(result, UpgradeAndFollow("cp-3", std::chrono::seconds(30)));
  EXPECT_TRUE(result.status.RunningAndReady());
  NodeVersion version;
  TR_ASSERT_OK_AND_ASSIGN(version, client_->Version(Address("cp-3")));
  EXPECT_EQ(version.tag, "v1.11.6");  // the A/B fallback: the upgrade did not take
}

TEST_P(ClientFaultTest, NeverReturnsMissesTheDeadline) {
  ASSERT_NO_FATAL_FAILURE(Inject("cp-1", sim::FaultKind::kNeverReturns, 1));
  auto result = UpgradeAndFollow("cp-1", std::chrono::milliseconds(1500));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(Message(result.status()), HasSubstr("not RUNNING and ready by the deadline"));
  // While it is down, calls for it are Unavailable, through another endpoint.
  auto version = client_->Version(Address("cp-1"));
  EXPECT_EQ(version.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Message(version.status()),
              HasSubstr(fmt::format("talos Version on node {}", Address("cp-1"))));
  // Once the fault is cleared the node boots and the other nodes were never affected.
  ASSERT_TRUE(client_->Version(Address("cp-2")).ok());
  ASSERT_TRUE(fleet_->ClearFaults("cp-1").ok());
  ASSERT_TRUE(
      fleet_
          ->WaitForNode(
              "cp-1", [](const sim::NodeSnapshot& n) { return n.ready; }, std::chrono::seconds(20))
          .ok());
  EXPECT_TRUE(client_->Version(Address("cp-1")).ok());
}

// Talos reverts only on a fatal boot error: a node that boots the new version and never
// becomes Ready stays on it, the fallback armed, and the follower reaches its deadline.
TEST_P(ClientFaultTest, NeverReadyStaysOnTheNewVersionPastTheDeadline) {
  ASSERT_NO_FATAL_FAILURE(Inject("w-1", sim::FaultKind::kNeverReady));
  auto result = UpgradeAndFollow("w-1", std::chrono::milliseconds(1500));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(Message(result.status()), HasSubstr("not RUNNING and ready by the deadline"));
  NodeVersion version;
  TR_ASSERT_OK_AND_ASSIGN(version, client_->Version(Address("w-1")));
  EXPECT_EQ(version.tag, "v1.12.4");
  const sim::NodeSnapshot node = Snapshot("w-1");
  EXPECT_EQ(node.stage, core::MachineStage::kRunning);
  EXPECT_FALSE(node.ready);
  EXPECT_EQ(node.fallback_slot, "A");
}

TEST_P(ClientFaultTest, SlowRebootIsWaitedFor) {
  ASSERT_NO_FATAL_FAILURE(
      Inject("w-1", sim::FaultKind::kSlowReboot, -1, std::chrono::milliseconds(200000)));
  // 200 s of fleet time at scale 0.001: the node stays down for about 200 ms.
  FollowResult result;
  TR_ASSERT_OK_AND_ASSIGN(result, UpgradeAndFollow("w-1", std::chrono::seconds(30)));
  EXPECT_GE(result.subscriptions, 2);  // resubscribed after the stream broke
  EXPECT_EQ(Snapshot("w-1").talos_tag, "v1.12.4");
}

TEST_P(ClientFaultTest, UnhealthyEtcdMemberBlocksControlPlaneUpgrade) {
  ASSERT_NO_FATAL_FAILURE(Inject("cp-3", sim::FaultKind::kEtcdUnhealthy));
  auto ack = Upgrade("cp-1");
  EXPECT_EQ(ack.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(Message(ack.status()), HasSubstr("error validating etcd for upgrade: etcd member"));
  EXPECT_THAT(Message(ack.status()), HasSubstr("is not healthy"));
  EXPECT_FALSE(UpgradeMutexHeld(ack.status()));
  EtcdMemberStatus status;
  TR_ASSERT_OK_AND_ASSIGN(status, client_->EtcdStatus(Address("cp-3")));
  EXPECT_FALSE(status.errors.empty());
}

TEST_P(ClientFaultTest, UpgradeLockHeld) {
  ASSERT_NO_FATAL_FAILURE(Inject("cp-2", sim::FaultKind::kUpgradeLockHeld, 1));
  auto ack = Upgrade("cp-2");
  EXPECT_EQ(ack.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(Message(ack.status()),
              HasSubstr("failed to acquire upgrade mutex: error trying to lock etcd upgrade "
                        "mutex: mutex: Locked by another session"));
  EXPECT_TRUE(UpgradeMutexHeld(ack.status()));
  // The lock is free again: the next attempt is accepted.
  EXPECT_TRUE(Upgrade("cp-2").ok());
}

TEST_P(ClientFaultTest, ApiUnreachableNodeAndEndpointFailover) {
  ASSERT_NO_FATAL_FAILURE(Inject("cp-1", sim::FaultKind::kApiUnreachable));
  // The node itself: Unavailable, kept apart from permission or node errors.
  auto version = client_->Version(Address("cp-1"));
  EXPECT_EQ(version.status().code(), absl::StatusCode::kUnavailable);
  // As an endpoint: read-only calls fail over to the next endpoint.
  std::unique_ptr<TalosClient> client;
  ASSERT_NO_FATAL_FAILURE(ClientThrough({"cp-1", "cp-2"}, &client));
  NodeVersion worker;
  TR_ASSERT_OK_AND_ASSIGN(worker, client->Version(Address("w-1")));
  EXPECT_EQ(worker.tag, "v1.13.0");
  // The endpoint that answered is preferred from then on, for changes too.
  std::string actor;
  TR_ASSERT_OK_AND_ASSIGN(actor, client->Reboot(Address("w-1"), RebootMode::kDefault));
  EXPECT_FALSE(actor.empty());
  const auto calls = Calls("w-1", "/machine.MachineService/Reboot");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].endpoint, "cp-2");
}

TEST_P(ClientFaultTest, ANodeTheEndpointCannotDialIsNotAskedAgainThroughTheNext) {
  ASSERT_NO_FATAL_FAILURE(Inject("w-1", sim::FaultKind::kApiUnreachable));
  std::unique_ptr<TalosClient> client;
  ASSERT_NO_FATAL_FAILURE(ClientThrough({"cp-1", "cp-2"}, &client));
  // cp-1 answers that it could not dial w-1: cp-2 would dial the same node, so it is not asked.
  auto first = client->Version(Address("w-1"));
  EXPECT_EQ(first.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(HostApidCouldNotDial(first.status()), Address("w-1")) << first.status();
  EXPECT_EQ(Calls("cp-1", "/machine.MachineService/Version").size(), 1u);
  EXPECT_EQ(Calls("cp-2", "/machine.MachineService/Version").size(), 0u);
  // The next call starts at the next endpoint, whose own connection to the node may be up.
  auto second = client->Version(Address("w-1"));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Calls("cp-1", "/machine.MachineService/Version").size(), 1u);
  EXPECT_EQ(Calls("cp-2", "/machine.MachineService/Version").size(), 1u);
}

TEST_P(ClientFaultTest, ANodeTheEndpointCannotDialMovesOnlyItsOwnCalls) {
  ASSERT_NO_FATAL_FAILURE(Inject("w-1", sim::FaultKind::kApiUnreachable));
  std::unique_ptr<TalosClient> client;
  ASSERT_NO_FATAL_FAILURE(ClientThrough({"cp-1", "cp-2", "cp-3"}, &client));
  const auto via = [&](const std::string& node) {
    const auto calls = Calls(node, "/machine.MachineService/Version");
    return calls.empty() ? std::string("none") : calls.back().endpoint;
  };
  // Every call goes through cp-2 first (the endpoint that answered last).
  ASSERT_TRUE(client->Version(Address("cp-1")).ok());
  EXPECT_EQ(via("cp-1"), "cp-2");
  // cp-2 cannot dial w-1: w-1's next call starts at cp-3, the other nodes' stay on cp-2.
  EXPECT_EQ(client->Version(Address("w-1")).status().code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(client->Version(Address("cp-1")).ok());
  EXPECT_EQ(via("cp-1"), "cp-2");
  // w-1 comes back and answers through cp-3; its calls then start where everyone's do.
  ASSERT_TRUE(fleet_->ClearFaults("w-1").ok());
  ASSERT_TRUE(client->Version(Address("w-1")).ok());
  EXPECT_EQ(via("w-1"), "cp-3");
  ASSERT_TRUE(client->Version(Address("w-1")).ok());
  EXPECT_EQ(via("w-1"), "cp-2");
  ASSERT_TRUE(client->Version(Address("cp-1")).ok());
  EXPECT_EQ(via("cp-1"), "cp-2");
}

INSTANTIATE_TEST_SUITE_P(DownNodes, ClientFaultTest, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "Refusing" : "Unavailable"; });

}  // namespace
}  // namespace tr::reconciler::talos
