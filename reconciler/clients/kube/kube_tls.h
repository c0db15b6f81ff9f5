// The TLS side of one Kubernetes client: its kubeconfig's client certificate, key and CA parsed
// once, and the httplib clients made from them for its connections (the kept-alive one and each
// Node watch's). Each new client used to parse the PEM again: in a 1,000-cluster rollout the
// Node watches' new clients were 1.6% of the daemon's CPU, the CA parsed again most of it
// (docs/benchmarks.md).
//
// Thread-safe: the parsed objects are only read (OpenSSL reference-counts and locks them).
#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "httplib.h"
#include "reconciler/clients/kube/kubeconfig.h"

namespace tr::reconciler::kube {

class KubeTls {
 public:
  // InvalidArgument for a CA with no usable certificate, or a client certificate or key that
  // does not parse.
  static absl::StatusOr<KubeTls> Parse(const KubeCredentials& credentials);

  // A client for `host`:`port` that presents the client certificate (or the bearer token) and
  // trusts the kubeconfig's CA only, for that host. InvalidArgument when the certificate and
  // key do not match, or the host cannot be pinned.
  absl::StatusOr<std::unique_ptr<httplib::SSLClient>> NewClient(const std::string& host,
                                                                int port) const;

 private:
  struct Parsed;
  explicit KubeTls(std::shared_ptr<const Parsed> parsed) : parsed_(std::move(parsed)) {}
  std::shared_ptr<const Parsed> parsed_;
};

}  // namespace tr::reconciler::kube
