// The gRPC-to-absl status adapter and the protobuf-to-typed conversions of the Talos client.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "google/rpc/status.pb.h"
#include "reconciler/clients/talos/grpc_call.h"
#include "reconciler/clients/talos/talos_convert.h"
#include "resource/definitions/runtime/runtime.pb.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;

const CallInfo kCall{"Upgrade", "10.0.0.12", "10.0.0.11:50000"};

TEST(GrpcCallTest, KeepsTheCodeAndNamesCallNodeAndEndpoint) {
  struct Case {
    grpc::StatusCode grpc;
    absl::StatusCode absl;
  };
  for (const auto& c :
       {Case{grpc::StatusCode::UNAVAILABLE, absl::StatusCode::kUnavailable},
        Case{grpc::StatusCode::PERMISSION_DENIED, absl::StatusCode::kPermissionDenied},
        Case{grpc::StatusCode::DEADLINE_EXCEEDED, absl::StatusCode::kDeadlineExceeded},
        Case{grpc::StatusCode::UNKNOWN, absl::StatusCode::kUnknown},
        Case{grpc::StatusCode::FAILED_PRECONDITION, absl::StatusCode::kFailedPrecondition},
        Case{grpc::StatusCode::UNIMPLEMENTED, absl::StatusCode::kUnimplemented}}) {
    const absl::Status status = FromGrpcStatus(grpc::Status(c.grpc, "node says no"), kCall);
    EXPECT_EQ(status.code(), c.absl);
    EXPECT_EQ(std::string(status.message()),
              "talos Upgrade on node 10.0.0.12 via 10.0.0.11:50000: node says no");
  }
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK, kCall).ok());
}

TEST(GrpcCallTest, ReplyElementWithMetadataErrorIsAnError) {
  common::Metadata metadata;
  EXPECT_TRUE(CheckReplyMetadata(metadata, kCall).ok());
  metadata.set_hostname("10.0.0.12");
  metadata.set_error("etcd member count(2) is insufficient");
  EXPECT_EQ(CheckReplyMetadata(metadata, kCall).code(), absl::StatusCode::kUnknown);
  metadata.mutable_status()->set_code(9);  // FAILED_PRECONDITION
  const absl::Status status = CheckReplyMetadata(metadata, kCall);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("etcd member count(2)"));
}

TEST(GrpcCallTest, UnaryReplyNeedsExactlyOneMessage) {
  CallAttempt attempt;
  attempt.info = kCall;
  machine::UpgradeResponse reply;
  EXPECT_EQ(attempt.Single(reply).status().code(), absl::StatusCode::kInternal);
  reply.add_messages()->set_actor_id("a");
  auto single = attempt.Single(reply);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ((*single)->actor_id(), "a");
  reply.add_messages();
  EXPECT_EQ(attempt.Single(reply).status().code(), absl::StatusCode::kInternal);
  reply.mutable_messages(0)->mutable_metadata()->set_error("boom");
  reply.mutable_messages()->RemoveLast();
  EXPECT_EQ(attempt.Single(reply).status().code(), absl::StatusCode::kUnknown);
}

machine::Event Packed(const std::string& name, const google::protobuf::Message& payload) {
  machine::Event event;
  event.set_id("cjq1");
  event.set_actor_id("actor");
  event.mutable_data()->set_type_url(std::string(kEventTypeUrlPrefix) + name);
  event.mutable_data()->set_value(payload.SerializeAsString());
  return event;
}

TEST(ConvertTest, DecodesEventsByTheirTalosTypeUrl) {
  machine::Event hello;
  auto decoded = ToMachineEvent(hello);
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(std::holds_alternative<HelloEvent>(decoded->payload));

  machine::SequenceEvent sequence;
  sequence.set_sequence("upgrade");
  sequence.set_action(machine::SequenceEvent::NOOP);
  sequence.mutable_error()->set_code(common::LOCKED);
  sequence.mutable_error()->set_message("sequence not started: locked");
  decoded = ToMachineEvent(Packed("SequenceEvent", sequence));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->actor_id, "actor");
  const auto& s = std::get<SequenceEvent>(decoded->payload);
  EXPECT_EQ(s.sequence, "upgrade");
  EXPECT_EQ(s.error_code, ErrorCode::kLocked);
  EXPECT_EQ(s.error_message, "sequence not started: locked");

  machine::MachineStatusEvent status;
  status.set_stage(machine::MachineStatusEvent::RUNNING);
  status.mutable_status()->set_ready(true);
  decoded = ToMachineEvent(Packed("MachineStatusEvent", status));
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(std::get<MachineStatusEvent>(decoded->payload).status.RunningAndReady());

  machine::PhaseEvent phase;
  phase.set_phase("kexec");
  decoded = ToMachineEvent(Packed("PhaseEvent", phase));
  EXPECT_EQ(std::get<PhaseEvent>(decoded->payload).phase, "kexec");

  machine::AddressEvent address;
  decoded = ToMachineEvent(Packed("AddressEvent", address));
  EXPECT_EQ(std::get<OtherEvent>(decoded->payload).type_url, "talos/runtime/machine.AddressEvent");

  // The usual Google prefix is not what Talos sends: not decoded as a MachineStatusEvent.
  machine::Event google = Packed("MachineStatusEvent", status);
  google.mutable_data()->set_type_url("type.googleapis.com/machine.MachineStatusEvent");
  EXPECT_TRUE(std::holds_alternative<OtherEvent>(ToMachineEvent(google)->payload));

  machine::Event corrupt = Packed("SequenceEvent", sequence);
  corrupt.mutable_data()->set_value("\xff\xff");
  EXPECT_EQ(ToMachineEvent(corrupt).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConvertTest, VersionTagIsParsed) {
  machine::Version message;
  message.mutable_version()->set_tag("v1.12.0-alpha.1-23-g1a2b3c4d");
  message.mutable_platform()->set_name("aws");
  auto version = ToNodeVersion(message);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(version->version.prerelease, "alpha.1");
  EXPECT_EQ(version->version.commits_since_tag, 23);
  EXPECT_EQ(version->platform, "aws");
  message.mutable_version()->set_tag("garbage");
  EXPECT_EQ(ToNodeVersion(message).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConvertTest, MachineStatusSpecAndServices) {
  ::talos::resource::definitions::runtime::MachineStatusSpec spec;
  spec.set_stage(::talos::resource::definitions::enums::MACHINE_STAGE_BOOTING);
  auto* unmet = spec.mutable_status()->add_unmet_conditions();
  unmet->set_name("nodeReady");
  unmet->set_reason("node not ready");
  auto status = MachineStatusFromSpec(spec.SerializeAsString());
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->stage, core::MachineStage::kBooting);
  ASSERT_EQ(status->unmet_conditions.size(), 1u);
  EXPECT_EQ(status->unmet_conditions[0].name, "nodeReady");
  EXPECT_EQ(MachineStatusFromSpec("\xff").status().code(), absl::StatusCode::kInvalidArgument);

  machine::ServiceInfo info;
  info.set_id("apid");
  info.set_state("Running");
  info.mutable_health()->set_unknown(true);
  EXPECT_TRUE(ToServiceState(info).Healthy());
  info.mutable_health()->set_unknown(false);
  EXPECT_FALSE(ToServiceState(info).Healthy());
  info.mutable_health()->set_healthy(true);
  info.set_state("Finished");
  EXPECT_FALSE(ToServiceState(info).Healthy());
}

TEST(ConvertTest, ABootIdIsTakenFromAChunkOnlyWhenTheChunkIsTheWholeLine) {
  const std::string id = "2c5b3c2e-6f1d-4b51-9a57-8e0c8f0c1d2e";
  EXPECT_EQ(WholeBootIdLine(id + "\n"), id);
  // A part of the file: no newline yet, or more after it.
  EXPECT_EQ(WholeBootIdLine(id.substr(0, 20)), std::nullopt);
  EXPECT_EQ(WholeBootIdLine(id), std::nullopt);
  EXPECT_EQ(WholeBootIdLine(id.substr(0, 20) + "\n" + id.substr(20)), std::nullopt);
  // Not one word: read whole and trimmed by the caller instead.
  EXPECT_EQ(WholeBootIdLine("\n"), std::nullopt);
  EXPECT_EQ(WholeBootIdLine(" " + id + "\n"), std::nullopt);
  EXPECT_EQ(WholeBootIdLine(""), std::nullopt);
}

}  // namespace
}  // namespace tr::reconciler::talos
