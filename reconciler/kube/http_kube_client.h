// KubeClient over HTTPS with cpp-httplib: the server's CA from the kubeconfig is the only trust
// anchor, credentials are a bearer token or a client certificate, every request has a timeout.
//
// Thread-safety: safe from several threads (each call uses its own connection).
#pragma once

#include <chrono>
#include <memory>

#include "reconciler/kube/kube_client.h"
#include "reconciler/kube/kubeconfig.h"

namespace tr::reconciler::kube {

struct HttpKubeClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{15000};
};

// InvalidArgument for a server URL that is not https://host[:port] or unusable key material.
absl::StatusOr<std::unique_ptr<KubeClient>> NewHttpKubeClient(const KubeCredentials& credentials,
                                                              HttpKubeClientOptions options = {});

}  // namespace tr::reconciler::kube
