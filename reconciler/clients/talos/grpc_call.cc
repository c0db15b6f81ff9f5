#include "reconciler/clients/talos/grpc_call.h"

#include "google/rpc/status.pb.h"
#include "reconciler/clients/talos/talos_answers.h"

namespace tr::reconciler::talos {

absl::Status CallError(absl::StatusCode code, const CallInfo& call, std::string_view message) {
  const std::string via = call.endpoint.empty() ? std::string() : " via " + call.endpoint;
  return absl::Status(
      code, fmt::format("talos {} on node {}{}: {}", call.method, call.node, via, message));
}

absl::Status FromGrpcStatus(const grpc::Status& status, const CallInfo& call) {
  if (status.ok()) return absl::OkStatus();
  // gRPC and absl number their codes identically (0 OK .. 16 UNAUTHENTICATED).
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  std::string message = status.error_message();
  if (message.empty()) message = absl::StatusCodeToString(code);
  return RecognizeTalosAnswer(CallError(code, call, message));
}

absl::Status CheckReplyMetadata(const common::Metadata& metadata, const CallInfo& call) {
  if (metadata.error().empty()) return absl::OkStatus();
  absl::StatusCode code = absl::StatusCode::kUnknown;
  if (metadata.has_status() && metadata.status().code() != 0) {
    code = static_cast<absl::StatusCode>(metadata.status().code());
  }
  return RecognizeTalosAnswer(CallError(code, call, metadata.error()));
}

}  // namespace tr::reconciler::talos
