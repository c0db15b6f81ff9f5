// Where the Leases live: the Kubernetes API of the cluster the reconciler runs in, reached
// with a kubeconfig (`--kubeconfig`) or, inside a pod, with its service account
// (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, and the token, ca.crt and namespace
// files the kubelet mounts under /var/run/secrets/kubernetes.io/serviceaccount). The
// service account token is short-lived and rotated by the kubelet in its file, so the client
// made here reads the file again (at most once a minute) and reconnects when it changed.
//
// Thread-safety: the client returned is safe from several threads.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "reconciler/clients/kube/http_kube_client.h"

namespace tr::reconciler::lease {

inline constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount";

struct LeaseEndpoint {
  std::unique_ptr<kube::KubeClient> client;
  std::string namespace_name;  // the service account's; "default" with a kubeconfig
};

// InvalidArgument naming what is missing (never a secret's value): an unreadable kubeconfig, or
// outside a pod (no KUBERNETES_SERVICE_HOST, no token or CA file).
absl::StatusOr<LeaseEndpoint> OpenLeaseEndpoint(
    const std::filesystem::path& kubeconfig, kube::HttpKubeClientOptions options, Env& env,
    const std::filesystem::path& account_dir = kServiceAccountDir);

}  // namespace tr::reconciler::lease
