// The simulator over the wire: generated stubs, mutual TLS with the Ed25519 material of the
// written talosconfigs, apid routing, RBAC and the node behaviour as a client sees it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "cosi/resource/state.grpc.pb.h"
#include "machine/image.grpc.pb.h"
#include "machine/lifecycle.grpc.pb.h"
#include "machine/machine.grpc.pb.h"
#include "resource/definitions/runtime/runtime.pb.h"
#include "tests/sim/api/apid_router.h"
#include "tests/sim/catalog/image_registry.h"
#include "tests/sim/fleet.h"
#include "tests/sim/test_client.h"

namespace tr::sim {
namespace {

using testing::Call;
using testing::Dial;
using ::testing::HasSubstr;
using testing::ReadTalosconfig;
using ::testing::StartsWith;
using testing::Talosconfig;
using namespace std::chrono_literals;

// The legacy upgrade's drain lasts 0.5 s (real): a test subscribes to the node's events after
// Upgrade answers and before the node goes down, also on a loaded machine.
constexpr const char* kGrpcFleet = R"(
time_scale: 0.002
timings: {drain: 250s}
clusters:
  - name: prod
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: cp-2, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: cp-3, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: w-1, role: worker, talos: v1.13.2, kubernetes: 1.34.1}
      - {name: w-2, role: worker, talos: v1.12.5, kubernetes: 1.34.1}
)";

class FleetGrpcTest : public testing::ProdFleetTest {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartProdFleet(kGrpcFleet, "sim-grpc")); }
  std::unique_ptr<machine::MachineService::Stub> Stub(const std::string& role,
                                                      const std::string& endpoint) {
    return machine::MachineService::NewStub(
        Dial(ReadTalosconfig(access_.talosconfig_by_role.at(role)), endpoint));
  }
};

TEST_F(FleetGrpcTest, TalosconfigHasTalosShape) {
  EXPECT_EQ(admin_.context, "prod");
  EXPECT_EQ(admin_.endpoints, access_.control_plane_addresses);
  EXPECT_THAT(admin_.raw_key, StartsWith("-----BEGIN ED25519 PRIVATE KEY-----"));
  EXPECT_THAT(admin_.ca, StartsWith("-----BEGIN CERTIFICATE-----"));
}

TEST_F(FleetGrpcTest, VersionOverMutualTlsWithEd25519) {
  for (const char* node : {"cp-1", "cp-2", "w-1"}) {
    auto ctx = Call(Addr(node));
    machine::VersionResponse resp;
    auto st = machine_->Version(ctx.get(), {}, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(resp.messages_size(), 1);
    EXPECT_FALSE(resp.messages(0).has_metadata());
    EXPECT_EQ(resp.messages(0).version().tag(), node[0] == 'w' ? "v1.13.2" : "v1.11.6");
    EXPECT_EQ(resp.messages(0).platform().name(), "metal");
    EXPECT_EQ(resp.messages(0).platform().mode(), "metal");
    EXPECT_TRUE(resp.messages(0).features().rbac());
  }
}

TEST_F(FleetGrpcTest, ClientCertificateIsRequired) {
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = admin_.ca;
  auto stub = machine::MachineService::NewStub(
      grpc::CreateChannel(endpoint_ + ":50000", grpc::SslCredentials(tls)));
  auto ctx = Call({}, 3s);
  machine::VersionResponse resp;
  EXPECT_EQ(stub->Version(ctx.get(), {}, &resp).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(FleetGrpcTest, ApidRoutingRules) {
  machine::HostnameResponse resp;
  auto forwarded = Call(Addr("w-1"));
  ASSERT_TRUE(machine_->Hostname(forwarded.get(), {}, &resp).ok());
  EXPECT_EQ(resp.messages(0).hostname(), "w-1");

  auto two = Call(Addr("cp-2"));
  two->AddMetadata("node", Addr("cp-3"));
  auto st = machine_->Hostname(two.get(), {}, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "node metadata must be single-valued");

  // apid's backend factory refuses a target with a port: Internal (director.go, apid.go).
  auto port = Call(Addr("cp-2") + ":50000");
  st = machine_->Hostname(port.get(), {}, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(st.error_message(), "invalid target \"" + Addr("cp-2") + ":50000\"");
  // A bare IPv6 address is a valid target (no node has it here: the dial fails).
  auto ipv6 = Call("fd00::1");
  EXPECT_EQ(machine_->Hostname(ipv6.get(), {}, &resp).error_code(), grpc::StatusCode::UNAVAILABLE);
  auto bracketed = Call("[fd00::1]:50000");
  EXPECT_EQ(machine_->Hostname(bracketed.get(), {}, &resp).error_code(),
            grpc::StatusCode::INTERNAL);

  auto unknown = Call("127.254.254.254");
  EXPECT_EQ(machine_->Hostname(unknown.get(), {}, &resp).error_code(),
            grpc::StatusCode::UNAVAILABLE);

  auto worker = Stub("os:admin", Addr("w-1"));
  auto via_worker = Call(Addr("cp-1"));
  st = worker->Hostname(via_worker.get(), {}, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(st.error_message(), "no request forwarding");
  auto worker_self = Call(Addr("w-1"));
  EXPECT_TRUE(worker->Hostname(worker_self.get(), {}, &resp).ok());
}

TEST_F(FleetGrpcTest, RbacByCertificateOrganization) {
  auto reader = Stub("os:reader", endpoint_);
  machine::VersionResponse version;
  auto ctx = Call(Addr("cp-2"));
  EXPECT_TRUE(reader->Version(ctx.get(), {}, &version).ok());
  machine::UpgradeRequest upgrade;
  upgrade.set_image("ghcr.io/siderolabs/installer:v1.12.4");
  machine::UpgradeResponse upgraded;
  ctx = Call(Addr("cp-2"));
  auto st = reader->Upgrade(ctx.get(), upgrade, &upgraded);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  ctx = Call(Addr("cp-2"));
  machine::ReadRequest read;
  read.set_path("/proc/sys/kernel/random/boot_id");
  auto stream = reader->Read(ctx.get(), read);
  common::Data data;
  while (stream->Read(&data)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);

  auto backup = Stub("os:etcd:backup", endpoint_);
  ctx = Call();
  EXPECT_EQ(backup->Version(ctx.get(), {}, &version).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ctx = Call();
  machine::EtcdMemberListResponse members;
  EXPECT_TRUE(backup->EtcdMemberList(ctx.get(), {}, &members).ok());

  auto cosi = cosi::resource::State::NewStub(
      Dial(ReadTalosconfig(access_.talosconfig_by_role.at("os:reader")), endpoint_));
  cosi::resource::GetRequest get;
  get.set_namespace_("config");
  get.set_type("MachineConfigs.config.talos.dev");
  get.set_id("v1alpha1");
  cosi::resource::GetResponse got;
  ctx = Call();
  EXPECT_EQ(cosi->Get(ctx.get(), get, &got).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  get.set_namespace_("runtime");
  get.set_type("MachineStatuses.runtime.talos.dev");
  get.set_id("machine");
  ctx = Call();
  EXPECT_TRUE(cosi->Get(ctx.get(), get, &got).ok());
}

TEST_F(FleetGrpcTest, LegacyUpgradeAcrossTheReboot) {
  const std::string node = Addr("cp-2");
  const std::string boot_before = BootId("cp-2");
  ASSERT_EQ(boot_before.size(), 37u);
  auto events_ctx = Call(node, 30s);
  machine::EventsRequest events_req;
  auto events = machine_->Events(events_ctx.get(), events_req);
  machine::Event hello;
  ASSERT_TRUE(events->Read(&hello));
  EXPECT_TRUE(hello.has_data());
  EXPECT_EQ(hello.data().type_url(), "");
  EXPECT_EQ(hello.id().size(), 20u);  // an xid, like every event

  machine::UpgradeRequest req;
  req.set_image("ghcr.io/siderolabs/installer:v1.12.4");
  machine::UpgradeResponse resp;
  auto ctx = Call(node);
  auto st = machine_->Upgrade(ctx.get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(resp.messages(0).ack(), "Upgrade request received");
  const std::string actor = resp.messages(0).actor_id();

  std::vector<std::string> types;
  bool saw_actor = false;
  machine::Event ev;
  while (events->Read(&ev)) {
    EXPECT_THAT(ev.data().type_url(), StartsWith("talos/runtime/machine."));
    types.push_back(ev.data().type_url().substr(22));
    saw_actor |= ev.actor_id() == actor;
  }
  EXPECT_EQ(events->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(saw_actor);
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.back(), "RestartEvent");

  ASSERT_TRUE(fleet_
                  ->WaitForNode(
                      "cp-2", [](const NodeSnapshot& s) { return s.ready; }, 10s)
                  .ok());
  EXPECT_EQ(Tag("cp-2"), "v1.12.4");
  EXPECT_NE(BootId("cp-2"), boot_before);
  auto again = Call(node);
  events_req.set_tail_events(-1);
  auto replay = machine_->Events(again.get(), events_req);
  ASSERT_TRUE(replay->Read(&ev));  // hello
  ASSERT_TRUE(replay->Read(&ev));
  machine::SequenceEvent first;
  ASSERT_TRUE(first.ParseFromString(ev.data().value()));
  EXPECT_EQ(first.sequence(), "initialize");  // the buffer restarted with the boot
  again->TryCancel();
  replay->Finish();
}

TEST_F(FleetGrpcTest, EventsTailAndActorFilter) {
  const std::string node = Addr("w-2");
  machine::UpgradeRequest req;
  req.set_image("ghcr.io/siderolabs/installer:v1.13.1");
  machine::UpgradeResponse resp;
  auto ctx = Call(node);
  ASSERT_TRUE(machine_->Upgrade(ctx.get(), req, &resp).ok());
  const std::string actor = resp.messages(0).actor_id();
  machine::EventsRequest filtered;
  filtered.set_tail_events(-1);
  filtered.set_with_actor_id(actor);
  auto filtered_ctx = Call(node, 30s);
  auto stream = machine_->Events(filtered_ctx.get(), filtered);
  machine::Event ev;
  ASSERT_TRUE(stream->Read(&ev));
  EXPECT_EQ(ev.actor_id(), actor);  // the hello echoes the filter
  int matched = 0;
  while (stream->Read(&ev)) {
    EXPECT_EQ(ev.actor_id(), actor);
    ++matched;
  }
  EXPECT_GT(matched, 0);
  ASSERT_TRUE(fleet_
                  ->WaitForNode(
                      "w-2", [](const NodeSnapshot& s) { return s.ready; }, 10s)
                  .ok());
  // tail_events N: the last N buffered events, then only new ones (none come: the deadline ends
  // it).
  machine::EventsRequest tail;
  tail.set_tail_events(2);
  auto tail_ctx = Call(node, 300ms);
  auto tailed = machine_->Events(tail_ctx.get(), tail);
  int received = 0;
  while (tailed->Read(&ev)) ++received;
  EXPECT_EQ(tailed->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(received, 3);  // hello + 2
}

TEST_F(FleetGrpcTest, UpgradeErrorsComeBackAsUnknownWithTalosText) {
  machine::UpgradeRequest req;
  req.set_image("ghcr.io/siderolabs/installer");
  machine::UpgradeResponse resp;
  auto ctx = Call(Addr("cp-1"));
  auto st = machine_->Upgrade(ctx.get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_THAT(st.error_message(), StartsWith("error validating installer image"));
  ASSERT_TRUE(
      fleet_
          ->InjectFault("cp-1",
                        {.kind = FaultKind::kUpgradeLockHeld, .count = 1, .delay = {}, .image = {}})
          .ok());
  req.set_image("ghcr.io/siderolabs/installer:v1.12.4");
  ctx = Call(Addr("cp-1"));
  st = machine_->Upgrade(ctx.get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_THAT(st.error_message(), HasSubstr("mutex: Locked by another session"));
}

TEST_F(FleetGrpcTest, LifecycleAndImageServicesOnlyFrom113) {
  auto channel = Dial(admin_, endpoint_);
  auto lifecycle = machine::LifecycleService::NewStub(channel);
  auto images = machine::ImageService::NewStub(channel);
  const std::string factory = std::string("factory.talos.dev/metal-installer/") +
                              std::string(kVanillaSchematic) + ":v1.14.0";
  machine::LifecycleServiceUpgradeRequest req;
  req.mutable_containerd()->set_driver(common::CRI);
  req.mutable_containerd()->set_namespace_(common::NS_SYSTEM);
  req.mutable_source()->set_image_name(factory);
  auto old_ctx = Call(Addr("w-2"));
  auto old_stream = lifecycle->Upgrade(old_ctx.get(), req);
  machine::LifecycleServiceUpgradeResponse item;
  while (old_stream->Read(&item)) {
  }
  auto st = old_stream->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNIMPLEMENTED);

  machine::ImageServicePullRequest pull;
  *pull.mutable_containerd() = req.containerd();
  pull.set_image_ref(factory);
  auto pull_ctx = Call(Addr("w-1"));
  auto pulling = images->Pull(pull_ctx.get(), pull);
  machine::ImageServicePullResponse pulled;
  int progress = 0;
  std::string name;
  while (pulling->Read(&pulled)) {
    if (pulled.has_pull_progress()) ++progress;
    if (!pulled.name().empty()) name = pulled.name();
  }
  ASSERT_TRUE(pulling->Finish().ok());
  EXPECT_GT(progress, 0);
  // Pinned to its digest, as Talos answers a pull by tag.
  EXPECT_THAT(name, StartsWith(std::string("factory.talos.dev/metal-installer/") +
                               std::string(kVanillaSchematic) + "@sha256:"));

  req.mutable_source()->set_image_name(pull.image_ref());
  auto ctx = Call(Addr("w-1"));
  auto stream = lifecycle->Upgrade(ctx.get(), req);
  std::vector<std::string> messages;
  int exit_code = -1;
  while (stream->Read(&item)) {
    if (item.progress().has_exit_code()) exit_code = item.progress().exit_code();
    if (item.progress().has_message()) messages.push_back(item.progress().message());
  }
  ASSERT_TRUE(stream->Finish().ok());
  EXPECT_EQ(exit_code, 0);
  EXPECT_FALSE(messages.empty());
  EXPECT_EQ(Tag("w-1"), "v1.13.2");  // installed, not rebooted
  machine::RebootResponse rebooted;
  auto reboot_ctx = Call(Addr("w-1"));
  ASSERT_TRUE(machine_->Reboot(reboot_ctx.get(), {}, &rebooted).ok());
  EXPECT_EQ(rebooted.messages(0).actor_id().size(), 36u);
  ASSERT_TRUE(
      fleet_
          ->WaitForNode(
              "w-1", [](const NodeSnapshot& s) { return s.ready && s.talos_tag == "v1.14.0"; }, 10s)
          .ok());
}

TEST_F(FleetGrpcTest, UnreachableNodeAnswersUnavailable) {
  ASSERT_TRUE(
      fleet_
          ->InjectFault("cp-3",
                        {.kind = FaultKind::kApiUnreachable, .count = -1, .delay = {}, .image = {}})
          .ok());
  machine::VersionResponse resp;
  auto forwarded = Call(Addr("cp-3"));
  EXPECT_EQ(machine_->Version(forwarded.get(), {}, &resp).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  auto direct = Stub("os:admin", Addr("cp-3"));
  auto ctx = Call();
  EXPECT_EQ(direct->Version(ctx.get(), {}, &resp).error_code(), grpc::StatusCode::UNAVAILABLE);
  ASSERT_TRUE(fleet_->ClearFaults("cp-3").ok());
  ctx = Call();
  EXPECT_TRUE(direct->Version(ctx.get(), {}, &resp).ok());
}

TEST(FleetListenerTest, RefusesConnectionsWhileDownWhenAsked) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sim-refuse-" + std::to_string(getpid()));
  auto spec = FleetSpec::Parse(std::string(kGrpcFleet) + "refuse_connections_while_down: true\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->refuse_connections_while_down);
  auto fleet = Fleet::Start(*spec, dir);
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  Talosconfig admin = ReadTalosconfig((*fleet)->Cluster("prod")->talosconfig);
  auto direct = machine::MachineService::NewStub(Dial(admin, *(*fleet)->NodeAddress("cp-3")));
  ASSERT_TRUE(
      (*fleet)
          ->InjectFault("cp-3",
                        {.kind = FaultKind::kApiUnreachable, .count = -1, .delay = {}, .image = {}})
          .ok());
  machine::VersionResponse resp;
  grpc::Status st;
  // The listener closes shortly after the fault: until then the node itself answers UNAVAILABLE
  // ("... dial tcp ..."); afterwards the client's connection is refused.
  for (int i = 0; i < 500; ++i) {
    auto ctx = Call({}, 2s);
    st = direct->Version(ctx.get(), {}, &resp);
    if (st.error_code() == grpc::StatusCode::UNAVAILABLE &&
        st.error_message().find("dial tcp") == std::string::npos) {
      break;
    }
  }
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(st.error_message(), ::testing::Not(HasSubstr("dial tcp")));
  ASSERT_TRUE((*fleet)->ClearFaults("cp-3").ok());
  auto ctx = Call({}, 10s);
  ctx->set_wait_for_ready(true);
  st = direct->Version(ctx.get(), {}, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  (*fleet)->Stop();
  std::filesystem::remove_all(dir);
}

TEST_F(FleetGrpcTest, EtcdAndServices) {
  machine::EtcdMemberListResponse members;
  auto ctx = Call(Addr("cp-2"));
  ASSERT_TRUE(machine_->EtcdMemberList(ctx.get(), {}, &members).ok());
  ASSERT_EQ(members.messages(0).members_size(), 3);
  EXPECT_EQ(members.messages(0).members(0).hostname(), "cp-1");
  EXPECT_FALSE(members.messages(0).members(0).is_learner());
  machine::EtcdStatusResponse status;
  ctx = Call(Addr("cp-2"));
  ASSERT_TRUE(machine_->EtcdStatus(ctx.get(), {}, &status).ok());
  EXPECT_EQ(status.messages(0).member_status().leader(), members.messages(0).members(0).id());
  EXPECT_EQ(status.messages(0).member_status().errors_size(), 0);
  ctx = Call(Addr("w-1"));
  EXPECT_EQ(machine_->EtcdStatus(ctx.get(), {}, &status).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
  ctx = Call(Addr("cp-1"));
  auto snapshot = machine_->EtcdSnapshot(ctx.get(), {});
  common::Data chunk;
  size_t bytes = 0;
  while (snapshot->Read(&chunk)) bytes += chunk.bytes().size();
  EXPECT_TRUE(snapshot->Finish().ok());
  EXPECT_GT(bytes, 0u);
  machine::ServiceListResponse services;
  ctx = Call(Addr("cp-1"));
  ASSERT_TRUE(machine_->ServiceList(ctx.get(), {}, &services).ok());
  std::set<std::string> ids;
  for (const auto& s : services.messages(0).services()) {
    ids.insert(s.id());
    EXPECT_EQ(s.state(), "Running");
    EXPECT_TRUE(s.health().healthy());
  }
  EXPECT_TRUE(ids.contains("etcd") && ids.contains("kubelet") && ids.contains("apid"));
}

// apid proxies a call with `nodes` metadata to each node named and answers their messages
// merged, each with its node's metadata.hostname; a node it cannot dial, or whose machined
// fails, is a message carrying only the error; the call itself succeeds (director.go,
// backend/apid.go AppendInfo/BuildError @ v1.13.9; grpc-proxy handler_one2many.go).
TEST_F(FleetGrpcTest, EtcdStatusOneToManyMergesEachNodesMessage) {
  ASSERT_TRUE(
      fleet_
          ->InjectFault("cp-3",
                        {.kind = FaultKind::kApiUnreachable, .count = -1, .delay = {}, .image = {}})
          .ok());
  auto ctx = Call();
  for (const char* node : {"cp-1", "cp-2", "cp-3", "w-1"}) ctx->AddMetadata("nodes", Addr(node));
  machine::EtcdStatusResponse status;
  auto st = machine_->EtcdStatus(ctx.get(), {}, &status);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(status.messages_size(), 4);
  for (int i : {0, 1}) {
    EXPECT_EQ(status.messages(i).metadata().hostname(), Addr(i == 0 ? "cp-1" : "cp-2"));
    EXPECT_EQ(status.messages(i).metadata().error(), "");
    EXPECT_NE(status.messages(i).member_status().member_id(), 0u);
  }
  EXPECT_NE(status.messages(0).member_status().member_id(),
            status.messages(1).member_status().member_id());
  const common::Metadata& down = status.messages(2).metadata();
  EXPECT_EQ(down.hostname(), Addr("cp-3"));
  EXPECT_THAT(down.error(), StartsWith("rpc error: code = Unavailable desc = "));
  EXPECT_EQ(down.status().code(), static_cast<int>(grpc::StatusCode::UNAVAILABLE));
  EXPECT_FALSE(status.messages(2).has_member_status());
  EXPECT_EQ(status.messages(3).metadata().error(),
            "rpc error: code = Unimplemented desc = etcd status is only available on control "
            "plane nodes");
  // The journal holds the client's one call on the endpoint and each part marked as such.
  int calls = 0, parts = 0;
  for (const JournalEntry& e : fleet_->journal().Entries()) {
    if (e.kind != JournalEntry::Kind::kCall || e.what != "/machine.MachineService/EtcdStatus") {
      continue;
    }
    (e.detail.starts_with(kFanoutPart) ? parts : calls) += 1;
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(parts, 4);

  // A worker forwards nothing; its own name alone is served there, one-to-one.
  auto worker = Stub("os:admin", Addr("w-1"));
  ctx = Call();
  ctx->AddMetadata("nodes", Addr("cp-1"));
  st = worker->EtcdStatus(ctx.get(), {}, &status);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(st.error_message(), "no request forwarding");
  ctx = Call();
  ctx->AddMetadata("nodes", Addr("w-1"));
  EXPECT_EQ(worker->EtcdStatus(ctx.get(), {}, &status).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
  // A method talos-sim does not proxy one-to-many says so.
  ctx = Call();
  ctx->AddMetadata("nodes", Addr("cp-2"));
  machine::VersionResponse version;
  st = machine_->Version(ctx.get(), {}, &version);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(st.error_message(), HasSubstr("EtcdStatus only"));
  // A service apid never proxies so is refused by its director.
  auto cosi = cosi::resource::State::NewStub(channel_);
  ctx = Call();
  ctx->AddMetadata("nodes", Addr("cp-2"));
  cosi::resource::GetRequest get;
  cosi::resource::GetResponse got;
  st = cosi->Get(ctx.get(), get, &got);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(),
            "one-2-many proxying is not supported for method /cosi.resource.State/Get");
}

TEST_F(FleetGrpcTest, CosiWatchSeesMachineStatusChange) {
  auto cosi = cosi::resource::State::NewStub(Dial(admin_, endpoint_));
  cosi::resource::WatchRequest req;
  req.set_namespace_("runtime");
  req.set_type("MachineStatuses.runtime.talos.dev");
  req.set_id("machine");
  req.set_api_version(1);
  auto ctx = Call(Addr("w-2"), 30s);
  auto watch = cosi->Watch(ctx.get(), req);
  cosi::resource::WatchResponse resp;
  ASSERT_TRUE(watch->Read(&resp));
  EXPECT_EQ(resp.event_size(), 0);  // the watch is established
  ASSERT_TRUE(watch->Read(&resp));
  ASSERT_EQ(resp.event_size(), 1);
  EXPECT_EQ(resp.event(0).event_type(), cosi::resource::CREATED);
  machine::RebootResponse rebooted;
  auto reboot_ctx = Call(Addr("w-2"));
  ASSERT_TRUE(machine_->Reboot(reboot_ctx.get(), {}, &rebooted).ok());
  ASSERT_TRUE(watch->Read(&resp));
  EXPECT_EQ(resp.event(0).event_type(), cosi::resource::UPDATED);
  talos::resource::definitions::runtime::MachineStatusSpec spec;
  ASSERT_TRUE(spec.ParseFromString(resp.event(0).resource().spec().proto_spec()));
  EXPECT_EQ(spec.stage(), talos::resource::definitions::enums::MACHINE_STAGE_REBOOTING);
  while (watch->Read(&resp)) {
  }
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  cosi::resource::GetRequest get;
  get.set_namespace_("runtime");
  get.set_type("Services.v1alpha1.talos.dev");
  get.set_id("nope");
  cosi::resource::GetResponse got;
  auto get_ctx = Call();
  EXPECT_EQ(cosi->Get(get_ctx.get(), get, &got).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(FleetGrpcTest, JournalRecordsCallsWithRoleAndEndpoint) {
  Tag("w-1");
  auto entries = fleet_->journal().Entries();
  auto it = std::find_if(entries.begin(), entries.end(), [](const JournalEntry& e) {
    return e.kind == JournalEntry::Kind::kCall && e.what == "/machine.MachineService/Version";
  });
  ASSERT_NE(it, entries.end());
  EXPECT_EQ(it->node, "w-1");
  EXPECT_EQ(it->endpoint, "cp-1");
  EXPECT_EQ(it->role, "os:admin");
  EXPECT_EQ(it->code, "OK");
  EXPECT_TRUE(std::filesystem::file_size(dir_ / "journal.jsonl") > 0);
}

}  // namespace
}  // namespace tr::sim
