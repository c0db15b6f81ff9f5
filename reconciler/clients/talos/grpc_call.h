// The one adapter from gRPC outcomes to absl::Status for the Talos client, and the per-attempt
// state of a call (context, channel, where it went). Internal to reconciler/clients/talos.
//
// Messages have the shape "talos <Method> on node <node> via <endpoint>: <what happened>" and
// keep gRPC's code (gRPC and absl share the numbering). A reply element whose metadata.error is
// set (one-to-many proxying) becomes an error with metadata.status's code, Unknown when unset.
// Both carry the payload of what Talos' words mean (talos_answers.h).
//
// Thread-compatible: one CallAttempt per thread.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/common.pb.h"
#include "cosi/resource/state.grpc.pb.h"
#include "fmt/format.h"
#include "machine/machine.grpc.pb.h"

namespace tr::reconciler::talos {

struct CallInfo {
  std::string method;    // "Upgrade", "cosi.State/Get", ...
  std::string node;      // the target node (`node` metadata)
  std::string endpoint;  // "10.0.0.11:50000", the endpoint dialled
};

// "talos <method> on node <node> via <endpoint>: <message>" with `code`.
absl::Status CallError(absl::StatusCode code, const CallInfo& call, std::string_view message);

// grpc::Status -> absl::Status; OK stays OK.
absl::Status FromGrpcStatus(const grpc::Status& status, const CallInfo& call);

// OK unless `metadata.error` is set.
absl::Status CheckReplyMetadata(const common::Metadata& metadata, const CallInfo& call);

// The stubs of the services a look at a node calls, made once per channel: making a stub
// registers every method of its service with the channel (MachineService has about fifty).
// Stubs are thread-safe.
struct ChannelStubs {
  explicit ChannelStubs(const std::shared_ptr<grpc::Channel>& channel)
      : machine(machine::MachineService::NewStub(channel)),
        cosi(cosi::resource::State::NewStub(channel)) {}
  std::unique_ptr<machine::MachineService::Stub> machine;
  std::unique_ptr<cosi::resource::State::Stub> cosi;
};

// What one attempt of a call gets: a fresh context (deadline and `node` metadata already set),
// the connected channel and its stubs, and the call info for error messages.
struct CallAttempt {
  grpc::ClientContext context;
  std::shared_ptr<grpc::Channel> channel;
  CallInfo info;
  const ChannelStubs* stubs = nullptr;

  absl::Status Check(const grpc::Status& status) const { return FromGrpcStatus(status, info); }
  absl::Status Error(absl::StatusCode code, std::string_view message) const {
    return CallError(code, info, message);
  }

  // The single element of a unary reply's `messages`, checked for a metadata error.
  template <typename Reply>
  auto Single(const Reply& reply) const
      -> absl::StatusOr<const std::decay_t<decltype(reply.messages(0))>*> {
    if (reply.messages_size() != 1) {
      return Error(
          absl::StatusCode::kInternal,
          fmt::format("reply has {} messages, expected exactly one", reply.messages_size()));
    }
    const auto& message = reply.messages(0);
    if (absl::Status status = CheckReplyMetadata(message.metadata(), info); !status.ok()) {
      return status;
    }
    return &message;
  }
};

}  // namespace tr::reconciler::talos
