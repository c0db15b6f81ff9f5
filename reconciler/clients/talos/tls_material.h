// A look inside a talosconfig context's TLS material before anything is dialled. gRPC reads the
// material only when it connects, and then a damaged key or a certificate of another key is a
// failed handshake: every node reads as unreachable and the reason is a raw library line on
// stderr. Checked here instead, it is an error that names the field.
//
// Stateless; thread-safe.
#pragma once

#include <chrono>
#include <stop_token>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "reconciler/clients/talos/talosconfig.h"

namespace tr::reconciler::talos {

// OK when `ca` holds at least one readable certificate, `crt` is a readable certificate that is
// valid now and belongs to `key`, and `key` is a readable (unencrypted) private key.
// InvalidArgument naming the field ("key: ...", "crt: ...") otherwise; the message never
// contains the material.
absl::Status CheckTlsMaterial(const TalosContext& context);

// When the client certificate `crt_pem` expires (its notAfter). Talos's client certificates
// are valid for a year; the daemon exports this per cluster so that an alert comes before the
// reconciler is locked out. InvalidArgument when no certificate can be read.
absl::StatusOr<std::chrono::system_clock::time_point> CertificateNotAfter(
    const std::string& crt_pem);

// Why the mutual-TLS handshake with `endpoint` fails, when the material is to blame: the node's
// certificate is not signed by `ca` ("ca: …"), or the node refuses `crt` ("crt: …"). OK when
// the handshake succeeds, and when it fails for any other reason (nothing listening, no answer
// within `timeout`, a connection cut): those are the network's, not the talosconfig's. Used to
// explain nodes that read as unreachable; it makes one TCP connection and sends nothing but the
// handshake and an HTTP/2 preface. `stop` ends it at once (Cancelled): the connection is shut
// down under the connect or handshake waiting on it.
absl::Status DiagnoseHandshake(const TalosContext& context, const Endpoint& endpoint,
                               std::chrono::milliseconds timeout, std::stop_token stop = {});

}  // namespace tr::reconciler::talos
