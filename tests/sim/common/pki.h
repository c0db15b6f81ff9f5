// In-process PKI for talos-sim, with OpenSSL 3: certificate authorities and leaf certificates in
// the shapes Talos uses. The Talos OS CA, apid server certificates and client certificates are
// Ed25519 by default (as real Talos); ECDSA P-256 is available for the Kubernetes API CA (as real
// Talos) and for interop checks. Client certificates carry the RBAC role in Subject Organization
// ("os:admin", "os:reader", ...) and ExtKeyUsage exactly clientAuth.
//
// PEM output: certificates as "CERTIFICATE"; keys as PKCS#8 "PRIVATE KEY" (what OpenSSL and
// gRPC C++ read). TalosKeyPem relabels an Ed25519 key to "ED25519 PRIVATE KEY" the way Talos
// writes it into talosconfig.
//
// Thread-safety: a CertificateAuthority is immutable after Create; Issue* may be called from
// several threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::sim {

enum class KeyType { kEd25519, kEcdsaP256 };

struct CertifiedKey {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8, label "PRIVATE KEY"
};

struct LeafRequest {
  std::string common_name;
  std::vector<std::string> organizations;
  std::vector<std::string> ip_sans;   // "127.0.42.1"
  std::vector<std::string> dns_sans;  // "cp-1"
  bool server = false;                // ExtKeyUsage serverAuth (else clientAuth)
  KeyType key_type = KeyType::kEd25519;
};

class CertificateAuthority {
 public:
  // A self-signed CA valid for ten years (from one hour ago). Internal on OpenSSL failure.
  static absl::StatusOr<CertificateAuthority> Create(std::string_view organization,
                                                     KeyType key_type);

  // A leaf signed by this CA, valid for one year (from one hour ago). Internal on OpenSSL
  // failure, InvalidArgument for an unparsable IP SAN.
  absl::StatusOr<CertifiedKey> Issue(const LeafRequest& request) const;

  const std::string& cert_pem() const { return self_.cert_pem; }

  struct Keys;

 private:
  CertificateAuthority(CertifiedKey self, std::shared_ptr<const Keys> keys)
      : self_(std::move(self)), keys_(std::move(keys)) {}

  CertifiedKey self_;
  std::shared_ptr<const Keys> keys_;
};

// Replaces the PEM label "PRIVATE KEY" with "ED25519 PRIVATE KEY" (Talos' talosconfig quirk).
std::string TalosKeyPem(std::string_view pkcs8_pem);

// Standard base64 with padding, no line breaks (talosconfig ca/crt/key, kubeconfig *-data).
std::string Base64(std::string_view bytes);

// Random hex of `bytes` bytes from OpenSSL's RNG (bearer tokens, ids).
std::string RandomHex(size_t bytes);

}  // namespace tr::sim
