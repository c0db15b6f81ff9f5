// Pins the field numbers of the Talos API subset: every case decodes wire bytes written by
// hand from tags ((field << 3) | wire type; 0 = varint, 2 = length-delimited) per
// docs/talos-api.md, and checks that the decoded message has the expected values.
#include <gtest/gtest.h>

#include <string>

#include "common/common.pb.h"
#include "cosi/resource/state.grpc.pb.h"
#include "machine/image.grpc.pb.h"
#include "machine/lifecycle.grpc.pb.h"
#include "machine/machine.grpc.pb.h"
#include "resource/config/config.pb.h"
#include "resource/definitions/k8s/k8s.pb.h"
#include "resource/definitions/runtime/runtime.pb.h"
#include "resource/definitions/v1alpha1/v1alpha1.pb.h"

// The wire bytes below are laid out by hand, one field per line; keep clang-format away.
// clang-format off
namespace {

using namespace std::string_literals;

template <typename Message>
Message Decode(const std::string& wire) {
  Message message;
  EXPECT_TRUE(message.ParseFromString(wire));
  // No field of the hand-written bytes may land in the unknown set: every tag must be known.
  EXPECT_TRUE(message.GetReflection()->GetUnknownFields(message).empty());
  return message;
}

TEST(WireTest, UpgradeRequest) {
  const std::string wire = "\x0a\x09" "inst:v1.2"  // 1 image
                           "\x10\x01"              // 2 preserve
                           "\x18\x01"              // 3 stage
                           "\x20\x01"              // 4 force
                           "\x28\x01"s;            // 5 reboot_mode = POWERCYCLE
  auto request = Decode<machine::UpgradeRequest>(wire);
  EXPECT_EQ(request.image(), "inst:v1.2");
  EXPECT_TRUE(request.preserve());
  EXPECT_TRUE(request.stage());
  EXPECT_TRUE(request.force());
  EXPECT_EQ(request.reboot_mode(), machine::UpgradeRequest::POWERCYCLE);
  EXPECT_EQ(request.SerializeAsString(), wire);
}

TEST(WireTest, UpgradeResponseAndUpgrade) {
  // UpgradeResponse{1 messages: Upgrade{1 metadata{1 hostname "n1"}, 2 ack, 3 actor_id}}
  const std::string upgrade = "\x0a\x04" "\x0a\x02" "n1"
                              "\x12\x03" "ack"
                              "\x1a\x04" "a-id"s;
  const std::string wire = "\x0a"s + static_cast<char>(upgrade.size()) + upgrade;
  auto response = Decode<machine::UpgradeResponse>(wire);
  ASSERT_EQ(response.messages_size(), 1);
  EXPECT_EQ(response.messages(0).metadata().hostname(), "n1");
  EXPECT_EQ(response.messages(0).ack(), "ack");
  EXPECT_EQ(response.messages(0).actor_id(), "a-id");
}

TEST(WireTest, VersionAndVersionInfo) {
  const std::string info = "\x0a\x07" "v1.11.6"   // 1 tag
                           "\x12\x08" "1a2b3c4d"  // 2 sha
                           "\x1a\x00"             // 3 built
                           "\x22\x06" "go1.24"    // 4 go_version
                           "\x2a\x05" "linux"     // 5 os
                           "\x32\x05" "amd64"s;   // 6 arch
  auto decoded = Decode<machine::VersionInfo>(info);
  EXPECT_EQ(decoded.tag(), "v1.11.6");
  EXPECT_EQ(decoded.sha(), "1a2b3c4d");
  EXPECT_EQ(decoded.go_version(), "go1.24");
  EXPECT_EQ(decoded.os(), "linux");
  EXPECT_EQ(decoded.arch(), "amd64");

  const std::string version = "\x12"s + static_cast<char>(info.size()) + info +  // 2 version
                              "\x1a\x0d" "\x0a\x05" "metal" "\x12\x04" "meta"     // 3 platform
                              "\x22\x02" "\x08\x01"s;                              // 4 features
  auto message = Decode<machine::Version>(version);
  EXPECT_EQ(message.version().tag(), "v1.11.6");
  EXPECT_EQ(message.platform().name(), "metal");
  EXPECT_EQ(message.platform().mode(), "meta");
  EXPECT_TRUE(message.features().rbac());
}

TEST(WireTest, EtcdMember) {
  const std::string wire = "\x10\x96\x01"               // 2 id = 150
                           "\x1a\x03" "cp0"              // 3 hostname
                           "\x22\x05" "https"            // 4 peer_urls
                           "\x2a\x04" "http"             // 5 client_urls
                           "\x30\x01"s;                  // 6 is_learner
  auto member = Decode<machine::EtcdMember>(wire);
  EXPECT_EQ(member.id(), 150u);
  EXPECT_EQ(member.hostname(), "cp0");
  ASSERT_EQ(member.peer_urls_size(), 1);
  EXPECT_EQ(member.peer_urls(0), "https");
  ASSERT_EQ(member.client_urls_size(), 1);
  EXPECT_EQ(member.client_urls(0), "http");
  EXPECT_TRUE(member.is_learner());

  // Field 1 is unused: a varint there must not become the id.
  machine::EtcdMember with_field_one;
  ASSERT_TRUE(with_field_one.ParseFromString("\x08\x07"s));
  EXPECT_EQ(with_field_one.id(), 0u);

  // EtcdMembers{1 metadata, 2 legacy_members, 3 members}
  const std::string members = "\x12\x02" "m0" "\x1a"s + static_cast<char>(wire.size()) + wire;
  auto list = Decode<machine::EtcdMembers>(members);
  ASSERT_EQ(list.legacy_members_size(), 1);
  ASSERT_EQ(list.members_size(), 1);
  EXPECT_EQ(list.members(0).hostname(), "cp0");
}

TEST(WireTest, EtcdMemberStatus) {
  const std::string wire = "\x0a\x05" "3.5.0"   // 1 protocol_version
                           "\x10\x64"           // 2 db_size = 100
                           "\x18\x32"           // 3 db_size_in_use = 50
                           "\x20\x07"           // 4 leader
                           "\x28\x08"           // 5 raft_index
                           "\x30\x09"           // 6 raft_term
                           "\x38\x0a"           // 7 raft_applied_index
                           "\x42\x03" "bad"     // 8 errors
                           "\x48\x01"           // 9 is_learner
                           "\x50\x0b"           // 10 member_id
                           "\x5a\x05" "3.6.0"s;  // 11 storage_version
  auto status = Decode<machine::EtcdMemberStatus>(wire);
  EXPECT_EQ(status.protocol_version(), "3.5.0");
  EXPECT_EQ(status.db_size(), 100);
  EXPECT_EQ(status.db_size_in_use(), 50);
  EXPECT_EQ(status.leader(), 7u);
  EXPECT_EQ(status.raft_index(), 8u);
  EXPECT_EQ(status.raft_term(), 9u);
  EXPECT_EQ(status.raft_applied_index(), 10u);
  ASSERT_EQ(status.errors_size(), 1);
  EXPECT_EQ(status.errors(0), "bad");
  EXPECT_TRUE(status.is_learner());
  EXPECT_EQ(status.member_id(), 11u);
  EXPECT_EQ(status.storage_version(), "3.6.0");
}

TEST(WireTest, EventsRequestTailMinusOne) {
  const std::string wire =
      "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"  // 1 tail_events = -1 (int32, 10 bytes)
      "\x12\x02" "id"                                 // 2 tail_id
      "\x18\x05"                                      // 3 tail_seconds
      "\x22\x05" "actor"s;                            // 4 with_actor_id
  auto request = Decode<machine::EventsRequest>(wire);
  EXPECT_EQ(request.tail_events(), -1);
  EXPECT_EQ(request.tail_id(), "id");
  EXPECT_EQ(request.tail_seconds(), 5);
  EXPECT_EQ(request.with_actor_id(), "actor");
  EXPECT_EQ(request.SerializeAsString(), wire);
}

TEST(WireTest, EventWithMachineStatusPayload) {
  // MachineStatusEvent{1 stage RUNNING, 2 status{1 ready, 2 unmet{1 name, 2 reason}}}
  const std::string status = "\x08\x04"
                             "\x12\x0f" "\x08\x01" "\x12\x0b" "\x0a\x04" "time" "\x12\x03" "off"s;
  auto payload = Decode<machine::MachineStatusEvent>(status);
  EXPECT_EQ(payload.stage(), machine::MachineStatusEvent::RUNNING);
  EXPECT_TRUE(payload.status().ready());
  ASSERT_EQ(payload.status().unmet_conditions_size(), 1);
  EXPECT_EQ(payload.status().unmet_conditions(0).name(), "time");
  EXPECT_EQ(payload.status().unmet_conditions(0).reason(), "off");

  const std::string type_url = "talos/runtime/machine.MachineStatusEvent";
  const std::string any = "\x0a"s + static_cast<char>(type_url.size()) + type_url + "\x12"s +
                          static_cast<char>(status.size()) + status;
  const std::string wire = "\x12"s + static_cast<char>(any.size()) + any +  // 2 data
                           "\x1a\x03" "xid"                                 // 3 id
                           "\x22\x02" "ac"s;                                // 4 actor_id
  auto event = Decode<machine::Event>(wire);
  EXPECT_EQ(event.data().type_url(), type_url);
  EXPECT_EQ(event.id(), "xid");
  EXPECT_EQ(event.actor_id(), "ac");
  machine::MachineStatusEvent unpacked;
  ASSERT_TRUE(unpacked.ParseFromString(event.data().value()));
  EXPECT_EQ(unpacked.stage(), machine::MachineStatusEvent::RUNNING);
}

TEST(WireTest, MachineStageNumbers) {
  EXPECT_EQ(machine::MachineStatusEvent::BOOTING, 1);
  EXPECT_EQ(machine::MachineStatusEvent::RUNNING, 4);
  EXPECT_EQ(machine::MachineStatusEvent::REBOOTING, 5);
  EXPECT_EQ(machine::MachineStatusEvent::UPGRADING, 8);
}

TEST(WireTest, SequenceEventAndCommonError) {
  // SequenceEvent{1 "upgrade", 2 NOOP (omitted as default), 3 error{1 LOCKED, 2 message}}
  const std::string error = "\x08\x01" "\x12\x06" "locked"s;
  auto decoded_error = Decode<common::Error>(error);
  EXPECT_EQ(decoded_error.code(), common::LOCKED);
  EXPECT_EQ(decoded_error.message(), "locked");

  const std::string wire = "\x0a\x07" "upgrade" "\x10\x01" "\x1a"s +
                           static_cast<char>(error.size()) + error;
  auto event = Decode<machine::SequenceEvent>(wire);
  EXPECT_EQ(event.sequence(), "upgrade");
  EXPECT_EQ(event.action(), machine::SequenceEvent::START);
  EXPECT_EQ(event.error().code(), common::LOCKED);
  EXPECT_EQ(common::CANCELED, 2);
  EXPECT_EQ(machine::SequenceEvent::STOP, 2);
}

TEST(WireTest, PhaseTaskServiceRestartEvents) {
  auto phase = Decode<machine::PhaseEvent>("\x0a\x05" "kexec" "\x10\x01"s);
  EXPECT_EQ(phase.phase(), "kexec");
  EXPECT_EQ(phase.action(), machine::PhaseEvent::STOP);
  auto task = Decode<machine::TaskEvent>("\x0a\x04" "task" "\x10\x01"s);
  EXPECT_EQ(task.action(), machine::TaskEvent::STOP);
  auto service = Decode<machine::ServiceStateEvent>("\x0a\x04" "etcd" "\x10\x08"
                                                    "\x1a\x02" "ok" "\x22\x02" "\x10\x01"s);
  EXPECT_EQ(service.service(), "etcd");
  EXPECT_EQ(service.action(), machine::ServiceStateEvent::STARTING);
  EXPECT_EQ(service.message(), "ok");
  EXPECT_TRUE(service.health().healthy());
  // 1 cmd = LINUX_REBOOT_CMD_KEXEC (0x45584543) as a varint.
  auto restart = Decode<machine::RestartEvent>("\x08\xc3\x8a\xe1\xaa\x04"s);
  EXPECT_EQ(restart.cmd(), 0x45584543LL);
}

TEST(WireTest, CommonMetadataAndData) {
  // Data{1 metadata{1 hostname, 2 error, 3 status{1 code 14, 2 message}}, 2 bytes}
  const std::string wire = "\x0a\x0f" "\x0a\x01" "h" "\x12\x01" "e" "\x1a\x07" "\x08\x0e"
                           "\x12\x03" "bad"
                           "\x12\x03" "abc"s;
  auto data = Decode<common::Data>(wire);
  EXPECT_EQ(data.metadata().hostname(), "h");
  EXPECT_EQ(data.metadata().error(), "e");
  EXPECT_EQ(data.metadata().status().code(), 14);
  EXPECT_EQ(data.metadata().status().message(), "bad");
  EXPECT_EQ(data.bytes(), "abc");
}

TEST(WireTest, LifecycleUpgradeRequestAndProgressOneof) {
  // 1 containerd{1 driver CRI, 2 namespace NS_SYSTEM}, 2 source{1 image_name}
  const std::string wire = "\x0a\x04" "\x08\x01" "\x10\x01" "\x12\x05" "\x0a\x03" "img"s;
  auto request = Decode<machine::LifecycleServiceUpgradeRequest>(wire);
  EXPECT_EQ(request.containerd().driver(), common::CRI);
  EXPECT_EQ(request.containerd().namespace_(), common::NS_SYSTEM);
  EXPECT_EQ(request.source().image_name(), "img");

  auto message = Decode<machine::LifecycleServiceUpgradeResponse>(
      "\x0a\x05" "\x0a\x03" "hey"s);  // 1 progress{1 message}
  EXPECT_EQ(message.progress().response_case(), machine::LifecycleServiceInstallProgress::kMessage);
  EXPECT_EQ(message.progress().message(), "hey");
  auto exit = Decode<machine::LifecycleServiceUpgradeResponse>(
      "\x0a\x02" "\x10\x03"s);  // 1 progress{2 exit_code 3}
  EXPECT_EQ(exit.progress().response_case(), machine::LifecycleServiceInstallProgress::kExitCode);
  EXPECT_EQ(exit.progress().exit_code(), 3);
  auto zero_exit = Decode<machine::LifecycleServiceUpgradeResponse>("\x0a\x02" "\x10\x00"s);
  EXPECT_EQ(zero_exit.progress().response_case(),
            machine::LifecycleServiceInstallProgress::kExitCode);
  EXPECT_EQ(zero_exit.progress().exit_code(), 0);

  auto install = Decode<machine::LifecycleServiceInstallRequest>("\x1a\x05" "\x0a\x03" "sda"s);
  EXPECT_EQ(install.destination().disk(), "sda");
}

TEST(WireTest, ImageServicePullRequestImageRefIsField3) {
  const std::string wire = "\x0a\x02" "\x10\x02" "\x1a\x05" "nginx"s;
  auto request = Decode<machine::ImageServicePullRequest>(wire);
  EXPECT_EQ(request.containerd().namespace_(), common::NS_CRI);
  EXPECT_EQ(request.image_ref(), "nginx");
  EXPECT_EQ(request.SerializeAsString(), wire);

  auto name = Decode<machine::ImageServicePullResponse>("\x0a\x01" "n"s);
  EXPECT_EQ(name.name(), "n");
  // 2 pull_progress{1 layer_id, 2 progress{1 EXTRACTING, 2 elapsed{1 seconds 3}, 3 offset, 4 total}}
  auto progress = Decode<machine::ImageServicePullResponse>(
      "\x12\x10" "\x0a\x02" "l1" "\x12\x0a" "\x08\x02" "\x12\x02\x08\x03" "\x18\x05" "\x20\x09"s);
  ASSERT_EQ(progress.response_case(), machine::ImageServicePullResponse::kPullProgress);
  EXPECT_EQ(progress.pull_progress().layer_id(), "l1");
  EXPECT_EQ(progress.pull_progress().progress().status(),
            machine::ImageServicePullLayerProgress::EXTRACTING);
  EXPECT_EQ(progress.pull_progress().progress().elapsed().seconds(), 3);
  EXPECT_EQ(progress.pull_progress().progress().offset(), 5);
  EXPECT_EQ(progress.pull_progress().progress().total(), 9);
}

TEST(WireTest, ImagePullLegacy) {
  auto request = Decode<machine::ImagePullRequest>("\x08\x02" "\x12\x03" "img"s);
  EXPECT_EQ(request.namespace_(), common::NS_CRI);
  EXPECT_EQ(request.reference(), "img");
}

TEST(WireTest, ApplyConfigurationRequestModeIsField4) {
  const std::string wire = "\x0a\x03" "cfg" "\x20\x02" "\x28\x01" "\x32\x02" "\x08\x3c"s;
  auto request = Decode<machine::ApplyConfigurationRequest>(wire);
  EXPECT_EQ(request.data(), "cfg");
  EXPECT_EQ(request.mode(), machine::ApplyConfigurationRequest::NO_REBOOT);
  EXPECT_TRUE(request.dry_run());
  EXPECT_EQ(request.try_mode_timeout().seconds(), 60);
  EXPECT_EQ(request.SerializeAsString(), wire);

  auto reply = Decode<machine::ApplyConfiguration>("\x12\x01" "w" "\x18\x01" "\x22\x01" "d"s);
  EXPECT_EQ(reply.warnings(0), "w");
  EXPECT_EQ(reply.mode(), machine::ApplyConfigurationRequest::AUTO);
  EXPECT_EQ(reply.mode_details(), "d");
}

TEST(WireTest, RebootReadLogsServiceList) {
  EXPECT_EQ(Decode<machine::RebootRequest>("\x08\x02"s).mode(), machine::RebootRequest::FORCE);
  EXPECT_EQ(Decode<machine::Reboot>("\x12\x02" "id"s).actor_id(), "id");
  EXPECT_EQ(Decode<machine::ReadRequest>("\x0a\x01" "p"s).path(), "p");
  auto logs = Decode<machine::LogsRequest>(
      "\x0a\x06" "system" "\x12\x04" "etcd" "\x18\x01" "\x20\x01" "\x28\x0a"s);
  EXPECT_EQ(logs.namespace_(), "system");
  EXPECT_EQ(logs.id(), "etcd");
  EXPECT_EQ(logs.driver(), common::CRI);
  EXPECT_TRUE(logs.follow());
  EXPECT_EQ(logs.tail_lines(), 10);
  auto info = Decode<machine::ServiceInfo>(
      "\x0a\x04" "etcd" "\x12\x07" "Running" "\x22\x06" "\x08\x01" "\x10\x01" "\x1a\x00"s);
  EXPECT_EQ(info.id(), "etcd");
  EXPECT_EQ(info.state(), "Running");
  EXPECT_TRUE(info.health().unknown());
  EXPECT_TRUE(info.health().healthy());
}

TEST(WireTest, CosiWatchRequest) {
  const std::string wire = "\x0a\x07" "runtime"                // 1 namespace
                           "\x12\x04" "Type"                    // 2 type
                           "\x1a\x07" "machine"                 // 3 id
                           "\x22\x08" "\x08\x01" "\x10\x02" "\x28\x01" "\x38\x01"  // 4 options
                           "\x28\x01"s;                         // 5 api_version
  auto request = Decode<cosi::resource::WatchRequest>(wire);
  EXPECT_EQ(request.namespace_(), "runtime");
  EXPECT_EQ(request.type(), "Type");
  ASSERT_TRUE(request.has_id());
  EXPECT_EQ(request.id(), "machine");
  EXPECT_TRUE(request.options().bootstrap_contents());
  EXPECT_EQ(request.options().tail_events(), 2);
  EXPECT_TRUE(request.options().aggregated());
  EXPECT_TRUE(request.options().bootstrap_bookmark());
  EXPECT_EQ(request.api_version(), 1);
}

TEST(WireTest, CosiResourceAndWatchEvent) {
  // Metadata{4 version "3", 6 phase "running", 10 labels{"k": "v"}}; Spec{1 proto_spec, 2 yaml}
  const std::string metadata = "\x22\x01" "3" "\x32\x07" "running" "\x52\x06" "\x0a\x01" "k"
                               "\x12\x01" "v"s;
  const std::string spec = "\x0a\x02" "\x08\x04" "\x12\x01" "y"s;
  const std::string resource = "\x0a"s + static_cast<char>(metadata.size()) + metadata + "\x12"s +
                               static_cast<char>(spec.size()) + spec;
  auto decoded = Decode<cosi::resource::Resource>(resource);
  EXPECT_EQ(decoded.metadata().version(), "3");
  EXPECT_EQ(decoded.metadata().phase(), "running");
  EXPECT_EQ(decoded.metadata().labels().at("k"), "v");
  EXPECT_EQ(decoded.spec().yaml_spec(), "y");

  // The proto_spec of runtime/MachineStatuses is MachineStatusSpec{1 stage}.
  talos::resource::definitions::runtime::MachineStatusSpec status;
  ASSERT_TRUE(status.ParseFromString(decoded.spec().proto_spec()));
  EXPECT_EQ(status.stage(), talos::resource::definitions::enums::MACHINE_STAGE_RUNNING);

  // WatchResponse{1 event{1 resource, 2 event_type UPDATED, 4 error}}
  const std::string event = "\x0a"s + static_cast<char>(resource.size()) + resource +
                            "\x10\x01" "\x22\x01" "x"s;
  const std::string wire = "\x0a"s + static_cast<char>(event.size()) + event;
  auto response = Decode<cosi::resource::WatchResponse>(wire);
  ASSERT_EQ(response.event_size(), 1);
  EXPECT_EQ(response.event(0).event_type(), cosi::resource::UPDATED);
  EXPECT_EQ(response.event(0).error(), "x");
  EXPECT_EQ(response.event(0).resource().metadata().version(), "3");
}

TEST(WireTest, ResourceSpecs) {
  auto service = Decode<talos::resource::definitions::v1alpha1::ServiceSpec>(
      "\x08\x01" "\x10\x01" "\x18\x01"s);
  EXPECT_TRUE(service.running());
  EXPECT_TRUE(service.healthy());
  EXPECT_TRUE(service.unknown());
  auto kubelet = Decode<talos::resource::definitions::k8s::KubeletSpecSpec>(
      "\x0a\x01" "i" "\x12\x01" "a" "\x22\x01" "n"s);
  EXPECT_EQ(kubelet.image(), "i");
  EXPECT_EQ(kubelet.args(0), "a");
  EXPECT_EQ(kubelet.expected_nodename(), "n");
  EXPECT_EQ(Decode<talos::resource::definitions::k8s::APIServerConfigSpec>("\x0a\x01" "i"s).image(),
            "i");
  auto scheduler =
      Decode<talos::resource::definitions::k8s::SchedulerConfigSpec>("\x08\x01" "\x12\x01" "s"s);
  EXPECT_TRUE(scheduler.enabled());
  EXPECT_EQ(scheduler.image(), "s");
  EXPECT_EQ(Decode<resource::config::MachineConfigSpec>("\x0a\x01" "y"s).yaml_marshalled(), "y");
}

TEST(WireTest, ServiceAndMethodPaths) {
  EXPECT_STREQ(machine::MachineService::service_full_name(), "machine.MachineService");
  EXPECT_STREQ(machine::LifecycleService::service_full_name(), "machine.LifecycleService");
  EXPECT_STREQ(machine::ImageService::service_full_name(), "machine.ImageService");
  EXPECT_STREQ(cosi::resource::State::service_full_name(), "cosi.resource.State");
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  const auto* service = pool->FindServiceByName("machine.MachineService");
  ASSERT_NE(service, nullptr);
  for (const char* method : {"Version", "Upgrade", "Rollback", "Reboot", "ApplyConfiguration",
                             "EtcdMemberList", "EtcdStatus", "EtcdSnapshot", "ServiceList",
                             "Events", "Logs", "Read", "Kubeconfig", "ImagePull"}) {
    EXPECT_NE(service->FindMethodByName(method), nullptr) << method;
  }
  EXPECT_TRUE(service->FindMethodByName("Events")->server_streaming());
  EXPECT_TRUE(service->FindMethodByName("EtcdSnapshot")->server_streaming());
  EXPECT_FALSE(service->FindMethodByName("Upgrade")->server_streaming());
  EXPECT_TRUE(pool->FindServiceByName("machine.LifecycleService")->FindMethodByName("Upgrade")
                  ->server_streaming());
  EXPECT_TRUE(pool->FindServiceByName("cosi.resource.State")->FindMethodByName("Watch")->server_streaming());
  EXPECT_FALSE(pool->FindServiceByName("cosi.resource.State")->FindMethodByName("Get")->server_streaming());
}

}  // namespace
// clang-format on
