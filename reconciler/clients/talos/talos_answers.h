// What Talos means by the answers that only its words tell apart. The adapter (grpc_call.cc,
// grpc_talos_client.cc) recognises them once, where the answer arrives, and marks the status
// with a payload (absl::Status::SetPayload); the code deciding what happens next asks the
// functions below and never reads Talos' message. The status keeps Talos' code and message.
//
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"

namespace tr::reconciler::talos {

// `answer`, a status in Talos' words (code and message as the node sent them), with the payload
// of what those words mean when they are one of the answers below; otherwise unchanged. Fakes
// of the Talos client call it too, so that their answers carry what the real adapter's do.
absl::Status RecognizeTalosAnswer(absl::Status answer);

// FailedPrecondition "another installation/upgrade is already in progress": the node still
// runs an install it was given earlier (e.g. one a killed process started).
bool InstallInProgress(const absl::Status& status);

// Unknown "failed to acquire upgrade mutex": below Talos 1.12.9 / 1.13.4 a control plane's
// Upgrade takes the etcd upgrade mutex even with preserve, and another session holds it; its
// lease expires within 60 s.
bool UpgradeMutexHeld(const absl::Status& status);

// Unavailable "connection error: desc = \"transport: Error while dialing: dial tcp HOST:50000:
// ...\"": apid's words (grpc-go's) when its proxy could not dial the node at HOST, down or still
// coming up (backend/apid.go). The dialed host when `status` says so, else nothing. apid dials its
// own node over a unix socket, so a HOST other than the endpoint's is the node behind it, which
// any other endpoint would dial too. (The client's own gRPC never words a failure so.)
std::optional<std::string> HostApidCouldNotDial(const absl::Status& status);

// Whether `status`, a call's Unavailable, says that every endpoint tried refused the connection
// or failed the TLS handshake, none merely not answering in time. Then the talosconfig may be
// why (tls_material.h's DiagnoseHandshake tells), and asking costs no timeout.
bool EveryEndpointRefused(const absl::Status& status);

// `status` marked as EveryEndpointRefused.
absl::Status MarkEveryEndpointRefused(absl::Status status);

}  // namespace tr::reconciler::talos
