// Where talos-sim fails as real Talos fails, over the wire: containerd instances, registry
// catalogue, Read of a missing file, COSI type and namespace checks and watch options (aggregated,
// tail events, the end of the bootstrapped list), etcd
// legacy_members, the sequence a RebootRequest.mode runs, and apid's reconnect backoff (refused,
// then hanging calls) towards a node that rebooted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <future>

#include "cosi/resource/state.grpc.pb.h"
#include "machine/image.grpc.pb.h"
#include "machine/lifecycle.grpc.pb.h"
#include "machine/machine.grpc.pb.h"
#include "tests/sim/fleet.h"
#include "tests/sim/catalog/image_registry.h"
#include "tests/sim/test_client.h"

namespace tr::sim {
namespace {

using testing::Call;
using testing::Dial;
using ::testing::HasSubstr;
using testing::ReadTalosconfig;
using namespace std::chrono_literals;

// apid_reconnect of 1500 s fleet time = 1.5 s real at this scale; everything else is quick.
constexpr const char* kFidelityFleet = R"(
time_scale: 0.001
timings: {apid_reconnect: 1500s}
registry:
  images: [docker.io/acme/tools:v2]
  schematics: [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]
clusters:
  - name: prod
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.13.2, kubernetes: 1.34.1}
      - {name: cp-2, role: controlplane, talos: v1.7.7, kubernetes: 1.34.1}
      - {name: w-1, role: worker, talos: v1.13.2, kubernetes: 1.34.1}
)";

class FidelityGrpcTest : public testing::ProdFleetTest {
 protected:
  // Through cp-1, the first endpoint.
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartProdFleet(kFidelityFleet, "sim-fidelity")); }

  grpc::Status Install(const std::string& node, const std::string& image, int driver, int ns) {
    auto lifecycle = machine::LifecycleService::NewStub(channel_);
    machine::LifecycleServiceUpgradeRequest req;
    req.mutable_containerd()->set_driver(static_cast<common::ContainerDriver>(driver));
    req.mutable_containerd()->set_namespace_(static_cast<common::ContainerdNamespace>(ns));
    req.mutable_source()->set_image_name(image);
    auto ctx = Call(Addr(node));
    auto stream = lifecycle->Upgrade(ctx.get(), req);
    machine::LifecycleServiceUpgradeResponse item;
    while (stream->Read(&item)) {
    }
    return stream->Finish();
  }
};

TEST_F(FidelityGrpcTest, ContainerdInstancesAndTheStoreTheInstallReads) {
  const std::string image =
      "factory.talos.dev/metal-installer/" + std::string(64, 'a') + ":v1.14.0";
  auto bad = Pull("w-1", image, common::CONTAINERD, common::NS_CRI);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(bad.error_message(), "cannot use CRI namespace with containerd driver");
  // The lifecycle service wraps the same refusal as Internal.
  auto wrapped = Install("w-1", image, common::CONTAINERD, common::NS_UNKNOWN);
  EXPECT_EQ(wrapped.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(wrapped.error_message(), HasSubstr("code = InvalidArgument"));
  // In the in-memory store, then asked for from the CRI store (talosctl's default): not there.
  ASSERT_TRUE(Pull("w-1", image, common::CONTAINERD, common::NS_SYSTEM).ok());
  auto elsewhere = Install("w-1", image, common::CRI, common::NS_SYSTEM);
  EXPECT_EQ(elsewhere.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(elsewhere.error_message(), HasSubstr("not found in containerd store"));
  ASSERT_TRUE(Pull("w-1", image, common::CRI, common::NS_SYSTEM).ok());
  EXPECT_TRUE(Install("w-1", image, common::CRI, common::NS_SYSTEM).ok());
}

TEST_F(FidelityGrpcTest, TheRegistryCatalogueDecidesWhatExists) {
  auto listed = Pull("w-1", "acme/tools:v2", common::CRI, common::NS_CRI);
  EXPECT_TRUE(listed.ok()) << listed.error_message();
  auto typo = Pull("w-1", "acme/tools:v3", common::CRI, common::NS_CRI);
  EXPECT_EQ(typo.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(typo.error_message(), HasSubstr("error pulling image: failed to pull image "
                                              "\"docker.io/acme/tools:v3\""));
  // The legacy ImagePull answers the same, on a node below 1.13.
  machine::ImagePullRequest legacy;
  legacy.set_namespace_(common::NS_SYSTEM);
  legacy.set_reference("factory.talos.dev/metal-installer/" + std::string(64, 'b') + ":v1.8.4");
  machine::ImagePullResponse pulled;
  auto ctx = Call(Addr("cp-2"));
  auto st = machine_->ImagePull(ctx.get(), legacy, &pulled);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  legacy.set_namespace_(common::NS_UNKNOWN);
  ctx = Call(Addr("cp-2"));
  st = machine_->ImagePull(ctx.get(), legacy, &pulled);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "invalid namespace NS_UNKNOWN");
}

TEST_F(FidelityGrpcTest, ReadOfAMissingFileIsNotFoundFrom18) {
  machine::ReadRequest req;
  req.set_path("/etc/missing");
  for (const auto& [node, code] : {std::pair{"cp-1", grpc::StatusCode::NOT_FOUND},
                                   std::pair{"cp-2", grpc::StatusCode::UNKNOWN}}) {
    auto ctx = Call(Addr(node));
    auto reader = machine_->Read(ctx.get(), req);
    common::Data data;
    while (reader->Read(&data)) {
    }
    auto st = reader->Finish();
    EXPECT_EQ(st.error_code(), code) << node;
    EXPECT_EQ(st.error_message(), "stat /etc/missing: no such file or directory");
  }
}

TEST_F(FidelityGrpcTest, EtcdMemberListFillsLegacyMembers) {
  machine::EtcdMemberListResponse members;
  auto ctx = Call(Addr("cp-1"));
  auto st = machine_->EtcdMemberList(ctx.get(), {}, &members);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_THAT(members.messages(0).legacy_members(), ::testing::ElementsAre("cp-1", "cp-2"));
}

TEST_F(FidelityGrpcTest, CosiRefusesUnknownTypesAndUnsupportedWatchOptions) {
  auto cosi = cosi::resource::State::NewStub(channel_);
  cosi::resource::GetRequest get;
  get.set_namespace_("runtime");
  get.set_type("MachineStatus.runtime.talos.dev");  // singular: no such type
  get.set_id("machine");
  cosi::resource::GetResponse got;
  auto ctx = Call(Addr("w-1"));
  auto st = cosi->Get(ctx.get(), get, &got);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(st.error_message(),
            "resource type \"MachineStatus.runtime.talos.dev\" is not supported");

  cosi::resource::WatchRequest watch;
  watch.set_namespace_("runtime");
  watch.set_type("MachineStatuses.runtime.talos.dev");
  watch.set_id("machine");
  watch.mutable_options()->set_bootstrap_contents(true);
  watch.set_api_version(1);
  ctx = Call(Addr("w-1"), 5s);
  auto by_id = cosi->Watch(ctx.get(), watch);
  cosi::resource::WatchResponse resp;
  EXPECT_FALSE(by_id->Read(&resp));
  EXPECT_EQ(by_id->Finish().error_code(), grpc::StatusCode::UNIMPLEMENTED);

  // A client before api_version 1 gets the bootstrap contents without the BOOTSTRAPPED marker.
  watch.clear_id();
  watch.set_api_version(0);
  ctx = Call(Addr("w-1"), 300ms);
  auto kind = cosi->Watch(ctx.get(), watch);
  int created = 0;
  while (kind->Read(&resp)) {
    for (const auto& event : resp.event()) {
      EXPECT_NE(event.event_type(), cosi::resource::BOOTSTRAPPED);
      created += event.event_type() == cosi::resource::CREATED;
    }
  }
  EXPECT_EQ(kind->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(created, 1);
}

// inmem/collection.go WatchAll: the list ends with BOOTSTRAPPED carrying a tombstone of the kind;
// `aggregated` puts the list and its marker in one response; `tail_events` replays the last
// changes instead of the list and cannot go with bootstrap contents.
TEST_F(FidelityGrpcTest, CosiWatchAggregatesTailsAndMarksTheEndOfTheList) {
  auto cosi = cosi::resource::State::NewStub(channel_);
  cosi::resource::WatchRequest watch;
  watch.set_namespace_("runtime");
  watch.set_type("MachineStatuses.runtime.talos.dev");
  watch.mutable_options()->set_bootstrap_contents(true);
  watch.mutable_options()->set_aggregated(true);
  watch.set_api_version(1);
  auto ctx = Call(Addr("w-1"), 5s);
  auto aggregated = cosi->Watch(ctx.get(), watch);
  cosi::resource::WatchResponse resp;
  ASSERT_TRUE(aggregated->Read(&resp));
  EXPECT_EQ(resp.event_size(), 0);  // the watch is established
  ASSERT_TRUE(aggregated->Read(&resp));
  ASSERT_EQ(resp.event_size(), 2);
  EXPECT_EQ(resp.event(0).event_type(), cosi::resource::CREATED);
  EXPECT_EQ(resp.event(0).resource().metadata().id(), "machine");
  EXPECT_EQ(resp.event(1).event_type(), cosi::resource::BOOTSTRAPPED);
  EXPECT_EQ(resp.event(1).resource().metadata().type(), "MachineStatuses.runtime.talos.dev");
  EXPECT_EQ(resp.event(1).resource().metadata().id(), "");
  EXPECT_EQ(resp.event(1).resource().metadata().version(), "undefined");
  ctx->TryCancel();
  EXPECT_EQ(aggregated->Finish().error_code(), grpc::StatusCode::CANCELLED);

  watch.mutable_options()->set_tail_events(1);
  ctx = Call(Addr("w-1"), 5s);
  auto both = cosi->Watch(ctx.get(), watch);
  EXPECT_FALSE(both->Read(&resp));
  grpc::Status refused = both->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(refused.error_message(),
            "cannot use BootstrapContents with TailEvents and StartFromBookmark options");

  // Only the last change of the kind is replayed, not the list.
  watch.mutable_options()->set_bootstrap_contents(false);
  watch.mutable_options()->set_aggregated(false);
  ctx = Call(Addr("w-1"), 300ms);
  auto tail = cosi->Watch(ctx.get(), watch);
  std::vector<cosi::resource::Event> events;
  while (tail->Read(&resp)) events.insert(events.end(), resp.event().begin(), resp.event().end());
  EXPECT_EQ(tail->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].resource().metadata().id(), "machine");
  EXPECT_NE(events[0].event_type(), cosi::resource::BOOTSTRAPPED);
}

// The access policy checks the namespace after the type, against the namespaces the node's
// Talos version registers ("security" from 1.13, "storage" from 1.14).
TEST_F(FidelityGrpcTest, CosiRefusesNamespacesTheNodeDoesNotRegister) {
  auto cosi = cosi::resource::State::NewStub(channel_);
  auto get = [&](const std::string& node, const std::string& ns, const std::string& type) {
    cosi::resource::GetRequest req;
    req.set_namespace_(ns);
    req.set_type(type);
    req.set_id("machine");
    cosi::resource::GetResponse got;
    auto ctx = Call(Addr(node));
    return cosi->Get(ctx.get(), req, &got);
  };
  const std::string status_type = "MachineStatuses.runtime.talos.dev";
  auto unknown = get("w-1", "v1alpha1", status_type);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(unknown.error_message(), "namespace \"v1alpha1\" is not supported");
  auto both = get("w-1", "v1alpha1", "MachineStatus.runtime.talos.dev");
  EXPECT_EQ(both.error_message(),
            "resource type \"MachineStatus.runtime.talos.dev\" is not supported");
  // A registered namespace without that resource: the state's own NotFound.
  EXPECT_EQ(get("w-1", "security", status_type).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(get("cp-2", "security", status_type).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(get("w-1", "storage", status_type).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(get("cp-2", "runtime", status_type).ok());

  cosi::resource::ListRequest list;
  list.set_namespace_("Runtime");
  list.set_type(status_type);
  auto ctx = Call(Addr("w-1"));
  auto reader = cosi->List(ctx.get(), list);
  cosi::resource::ListResponse item;
  EXPECT_FALSE(reader->Read(&item));
  auto st = reader->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(st.error_message(), "namespace \"Runtime\" is not supported");
}

// What one node's event stream shows of a Reboot with `mode`: the phases started, in order, and
// the RestartEvent's reboot command, read until the node goes down.
struct RebootSeen {
  std::vector<std::string> phases;
  int64_t restart_cmd = 0;
};

RebootSeen RebootAndWatch(machine::MachineService::Stub& machine, const std::string& node,
                          machine::RebootRequest::Mode mode) {
  RebootSeen seen;
  auto events_ctx = Call(node, 30s);
  auto events = machine.Events(events_ctx.get(), {});
  machine::Event ev;
  if (!events->Read(&ev)) return seen;  // hello
  machine::RebootRequest req;
  req.set_mode(mode);
  machine::RebootResponse reply;
  auto ctx = Call(node);
  if (!machine.Reboot(ctx.get(), req, &reply).ok()) return seen;
  while (events->Read(&ev)) {
    machine::PhaseEvent phase;
    machine::RestartEvent restart;
    if (ev.data().type_url().ends_with(".PhaseEvent") && phase.ParseFromString(ev.data().value()) &&
        phase.action() == machine::PhaseEvent::START) {
      seen.phases.push_back(phase.phase());
    } else if (ev.data().type_url().ends_with(".RestartEvent") &&
               restart.ParseFromString(ev.data().value())) {
      seen.restart_cmd = restart.cmd();
    }
  }
  events->Finish();
  return seen;
}

// RebootRequest.mode over the wire: FORCE skips to the reboot phase on 1.13; on 1.7 POWERCYCLE
// runs the whole metal list (with 1.7's unmountUser and no volumeFinalize) and restarts without
// kexec.
TEST_F(FidelityGrpcTest, RebootModesChangeTheSequence) {
  const RebootSeen forced = RebootAndWatch(*machine_, Addr("w-1"), machine::RebootRequest::FORCE);
  EXPECT_THAT(forced.phases, ::testing::ElementsAre("reboot"));
  EXPECT_EQ(forced.restart_cmd, 0x01234567);
  const RebootSeen cycled =
      RebootAndWatch(*machine_, Addr("cp-2"), machine::RebootRequest::POWERCYCLE);
  EXPECT_THAT(
      cycled.phases,
      ::testing::ElementsAre("cleanup", "dbus", "stopServices", "unmountUser", "umount",
                             "unmountBind", "unmountSystem", "kexec", "stopEverything", "reboot"));
  EXPECT_EQ(cycled.restart_cmd, 0x01234567);
}

// apid on cp-1 reaches w-1 only after its reconnect backoff, although w-1 is up; w-1's own apid
// answers at once.
TEST_F(FidelityGrpcTest, ForwardedCallsFailDuringApidReconnectBackoff) {
  machine::RebootResponse rebooted;
  auto ctx = Call(Addr("w-1"));
  ASSERT_TRUE(machine_->Reboot(ctx.get(), {}, &rebooted).ok());
  ASSERT_TRUE(fleet_
                  ->WaitForNode(
                      "w-1", [](const NodeSnapshot& n) { return n.boots == 2; }, 20s)
                  .ok());
  machine::VersionResponse version;
  ctx = Call(Addr("w-1"));
  auto st = machine_->Version(ctx.get(), {}, &version);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(st.error_message(), HasSubstr("connect: connection refused"));
  const auto admin = ReadTalosconfig(access_.talosconfig);
  auto direct = machine::MachineService::NewStub(Dial(admin, Addr("w-1")));
  ctx = Call();
  EXPECT_TRUE(direct->Version(ctx.get(), {}, &version).ok());
  // Polled with a deadline: the forwarded call succeeds once the backoff is over.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  do {
    ctx = Call(Addr("w-1"));
    st = machine_->Version(ctx.get(), {}, &version);
  } while (!st.ok() && std::chrono::steady_clock::now() < deadline);
  EXPECT_TRUE(st.ok()) << st.error_message();
}

// Right after a node boots, apid's connection attempt to it has not timed out yet: calls it
// forwards there hang (accepted, never answered) until the caller's deadline, or until the
// window ends with Unavailable `i/o timeout`; then the reconnect backoff refuses, then they pass.
// On a simulated clock, so the windows do not depend on how fast the machine is.
TEST(ApidHangTest, ForwardedCallsHangAfterABootThenFailThenPass) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sim-hang-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto spec = FleetSpec::Parse(R"(
timings: {apid_hang: 20s, apid_reconnect: 30s}
clusters:
  - name: prod
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.13.2, kubernetes: 1.34.1}
      - {name: w-1, role: worker, talos: v1.13.2, kubernetes: 1.34.1}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto clock = std::make_shared<ManualScheduler>();
  FleetOptions options;
  options.scheduler = clock;
  auto started = Fleet::Start(*spec, dir, options);
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<Fleet> fleet = *std::move(started);
  const auto admin = ReadTalosconfig(fleet->Cluster("prod")->talosconfig);
  auto via_cp1 = machine::MachineService::NewStub(Dial(admin, admin.endpoints.front()));
  const std::string w1 = *fleet->NodeAddress("w-1");
  auto version = [&](std::chrono::milliseconds deadline) {
    machine::VersionResponse reply;
    auto ctx = Call(w1, deadline);
    return via_cp1->Version(ctx.get(), {}, &reply);
  };

  machine::RebootResponse rebooted;
  auto ctx = Call(w1);
  ASSERT_TRUE(via_cp1->Reboot(ctx.get(), {}, &rebooted).ok());
  for (int i = 0; i < 600 && fleet->Node("w-1")->boots < 2; ++i) clock->AdvanceBy(100ms);
  ASSERT_EQ(fleet->Node("w-1")->boots, 2);

  // The clock stands still: only the caller's deadline ends the call.
  EXPECT_EQ(version(300ms).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  ASSERT_TRUE(fleet
                  ->WaitForNode(
                      "w-1", [](const NodeSnapshot& n) { return n.hanging_calls == 0; }, 10s)
                  .ok());
  auto pending = std::async(std::launch::async, [&] { return version(20s); });
  ASSERT_TRUE(fleet
                  ->WaitForNode(
                      "w-1", [](const NodeSnapshot& n) { return n.hanging_calls == 1; }, 10s)
                  .ok());
  clock->AdvanceBy(20s);
  const grpc::Status timed_out = pending.get();
  EXPECT_EQ(timed_out.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(timed_out.error_message(), HasSubstr(w1 + ":50000: i/o timeout"));
  auto refused = version(10s);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(refused.error_message(), HasSubstr("connect: connection refused"));
  clock->AdvanceBy(10s);
  auto served = version(10s);
  EXPECT_TRUE(served.ok()) << served.error_message();

  int gave_up = 0;
  for (const auto& entry : fleet->journal().Entries()) {
    gave_up += entry.what == "/machine.MachineService/Version" && entry.code == "CANCELLED";
  }
  EXPECT_EQ(gave_up, 1);
  fleet->Stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tr::sim
