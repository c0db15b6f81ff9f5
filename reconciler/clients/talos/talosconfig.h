// talosconfig: the Talos client configuration file (YAML) that talosctl reads, and the pieces of
// it the Talos API client needs — endpoints to dial, default nodes, and the mutual-TLS material.
//
// Format (docs/talos-api.md §1.2):
//   context: prod
//   contexts:
//     prod:
//       endpoints: [10.0.0.11, "10.0.0.12:50000", "https://10.0.0.13"]
//       nodes: [10.0.0.11]
//       ca: <base64 of PEM CA certificate(s)>
//       crt: <base64 of PEM client certificate>
//       key: <base64 of PEM client key>
//       target: 10.0.0.11   # deprecated single endpoint, merged into endpoints
// Other keys (auth, cluster, proxy-url, ...) are accepted and ignored.
//
// Talos writes Ed25519 keys as PKCS#8 in a PEM block labelled "ED25519 PRIVATE KEY"; gRPC C++
// (OpenSSL) reads only "PRIVATE KEY", so the label is rewritten while parsing.
//
// Errors never echo certificate or key material: they name the file, the context and the field.
// Values only; thread-compatible.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::reconciler::talos {

// apid's port; Talos clients add it to endpoints without one.
inline constexpr uint16_t kApidPort = 50000;

// One apid endpoint: host (IP or name, IPv6 without brackets) and port.
struct Endpoint {
  std::string host;
  uint16_t port = kApidPort;

  // "host:port", with brackets for IPv6: what gRPC dials.
  std::string Target() const;
  bool operator==(const Endpoint&) const = default;
};

// Parses "10.0.0.1", "10.0.0.1:50001", "[fd00::1]:50000", "fd00::1", "https://cp.example:50000"
// or "tcp://host". InvalidArgument naming the endpoint text when it cannot be parsed.
absl::StatusOr<Endpoint> ParseEndpoint(std::string_view text);

// One context with its TLS material decoded from base64 into PEM text.
struct TalosContext {
  std::string name;
  std::vector<Endpoint> endpoints;  // never empty after parsing
  std::vector<std::string> nodes;   // default target nodes; may be empty
  std::string ca_pem;               // CA certificate(s) that sign the apid server certificates
  std::string crt_pem;              // client certificate (role in Subject Organization)
  std::string key_pem;              // client key, PEM label already "PRIVATE KEY"
};

struct TalosConfig {
  std::string current_context;  // may be empty when the file names none
  std::map<std::string, TalosContext> contexts;

  // The named context, or the current one when `name` is empty. NotFound naming the context
  // when it does not exist; FailedPrecondition when `name` is empty and no context is current.
  absl::StatusOr<TalosContext> Context(std::string_view name = {}) const;
};

// Parses talosconfig YAML. `source` names the file in error messages. InvalidArgument for
// malformed YAML, a context without endpoints, missing or undecodable ca/crt/key, or material
// that is not PEM of the expected kind.
absl::StatusOr<TalosConfig> ParseTalosConfig(std::string_view yaml, std::string_view source);

// Reads and parses a file. NotFound when it cannot be read; otherwise as ParseTalosConfig.
absl::StatusOr<TalosConfig> LoadTalosConfig(const std::filesystem::path& path);

// The talosconfig talosctl reads when given no --talosconfig: $TALOSCONFIG when set (and not
// empty), else ~/.talos/config when that file exists; empty when neither.
std::filesystem::path DefaultTalosconfigPath();

// Rewrites the PEM labels "ED25519 PRIVATE KEY" to "PRIVATE KEY" (BEGIN and END lines); other
// text is returned unchanged.
std::string NormalizeKeyPem(std::string_view pem);

}  // namespace tr::reconciler::talos
