// The client configuration files talos-sim writes: talosconfig (facts §1.2: context, contexts
// with control-plane endpoints and base64 PEM ca/crt/key, the key labelled
// "ED25519 PRIVATE KEY" like Talos writes it) and a kubeconfig for the fake Kubernetes API with a
// bearer token. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "tests/sim/common/pki.h"

namespace tr::sim {

std::string RenderTalosconfig(const std::string& context, const std::vector<std::string>& endpoints,
                              const std::string& ca_pem, const CertifiedKey& client);

std::string RenderKubeconfig(const std::string& cluster, const std::string& server_url,
                             const std::string& ca_pem, const std::string& token);

}  // namespace tr::sim
