// A look inside a talosconfig context's TLS material before anything is dialled. gRPC reads the
// material only when it connects, and then a damaged key or a certificate of another key is a
// failed handshake: every node reads as unreachable and the reason is a raw library line on
// stderr. Checked here instead, it is an error that names the field.
//
// Stateless; thread-safe.
#pragma once

#include "absl/status/status.h"
#include "reconciler/talos/talosconfig.h"

namespace tr::reconciler::talos {

// OK when `ca` holds at least one readable certificate, `crt` is a readable certificate that is
// valid now and belongs to `key`, and `key` is a readable (unencrypted) private key.
// InvalidArgument naming the field ("key: ...", "crt: ...") otherwise; the message never
// contains the material.
absl::Status CheckTlsMaterial(const TalosContext& context);

}  // namespace tr::reconciler::talos
