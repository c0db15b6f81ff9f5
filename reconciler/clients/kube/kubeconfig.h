// Reading a kubeconfig (the admin kubeconfig Talos hands out, or any other): the current
// context's server URL, CA, and credentials (a bearer token or a client certificate and key).
// Key material is kept in memory only and never appears in errors.
//
// Pure; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tr::reconciler::kube {

struct KubeCredentials {
  std::string server;           // "https://10.0.0.10:6443"
  std::string ca_pem;           // certificate-authority-data, decoded
  std::string token;            // users[].user.token, if any
  std::string client_cert_pem;  // client-certificate-data, decoded, if any
  std::string client_key_pem;   // client-key-data, decoded, if any
};

// InvalidArgument naming the missing or malformed key (never its value).
absl::StatusOr<KubeCredentials> ParseKubeconfig(std::string_view yaml);

}  // namespace tr::reconciler::kube
