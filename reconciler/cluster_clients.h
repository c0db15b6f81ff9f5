// The API clients of one cluster: a Talos client from the talosconfig that the profile's
// `credentials` names (<credentials-dir>/<credentials>/talosconfig, dialling the profile's
// endpoints), and a Kubernetes client from the admin kubeconfig the Talos API hands out.
// Clients are made on first use and kept while the profile's credentials and endpoints stay
// the same; the talosconfig is read again when they change.
//
// Thread-safe.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "core/profile.h"
#include "gitsource/mutex.h"
#include "reconciler/kube/kube_client.h"
#include "reconciler/talos/grpc_talos_client.h"
#include "reconciler/talos/talos_client.h"

namespace tr::reconciler {

struct ClusterClients {
  std::shared_ptr<talos::TalosClient> talos;
  std::shared_ptr<kube::KubeClient> kube;  // null until the kubeconfig could be fetched
};

class ClusterClientFactory {
 public:
  virtual ~ClusterClientFactory() = default;
  // The clients of `profile`'s cluster. FailedPrecondition when its credentials are missing or
  // unusable (stalled until fixed); the Kubernetes client may be null when the kubeconfig
  // cannot be fetched yet (Talos API unreachable).
  virtual absl::StatusOr<ClusterClients> ForProfile(const core::ClusterProfile& profile) = 0;
};

class TalosconfigClientFactory final : public ClusterClientFactory {
 public:
  TalosconfigClientFactory(std::filesystem::path credentials_dir,
                           talos::GrpcTalosClientOptions options)
      : credentials_dir_(std::move(credentials_dir)), options_(std::move(options)) {}
  absl::StatusOr<ClusterClients> ForProfile(const core::ClusterProfile& profile) override;

 private:
  struct Entry {
    std::string key;  // credentials + endpoints the clients were made for
    ClusterClients clients;
  };
  std::shared_ptr<kube::KubeClient> FetchKube(const core::ClusterProfile& profile,
                                              talos::TalosClient& talos);

  const std::filesystem::path credentials_dir_;
  const talos::GrpcTalosClientOptions options_;
  Mutex mu_;
  std::map<std::string, Entry> by_cluster_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler
