// The API clients of one cluster: a Talos client from the talosconfig that the profile's
// `credentials` names (<credentials-dir>/<credentials>/talosconfig, or the context of that name
// in one talosconfig file; dialling the profile's endpoints), and a Kubernetes client from the
// admin kubeconfig the Talos API hands out. Clients are made on first use and kept while the
// profile's credentials and endpoints stay the same; the talosconfig is read again when they
// change.
//
// One cluster never slows another: no lock is held across a network call. The kubeconfig is
// fetched on a thread of its own (one fetch per cluster at a time); ForProfile waits for it at
// most `kube_wait` and otherwise returns without the Kubernetes client, so a cluster whose
// control planes accept connections and never answer only delays its own reconciles.
//
// The Kubernetes clients take `options.shutdown` too: the process's shutdown cancels their calls.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "base/mutex.h"
#include "core/profile.h"
#include "reconciler/clients/kube/kube_client.h"
#include "reconciler/clients/talos/grpc_talos_client.h"
#include "reconciler/clients/talos/talos_client.h"
#include "reconciler/clients/talos_credentials.h"

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
  // When no node of `profile` answers: FailedPrecondition naming the talosconfig's file,
  // context and field when its material is why; OK when it cannot tell (Cancelled when stopped).
  virtual absl::Status DiagnoseUnreachable(const core::ClusterProfile& profile) {
    (void)profile;
    return absl::OkStatus();
  }
};

class TalosconfigClientFactory final : public ClusterClientFactory {
 public:
  // Cancel `options.shutdown` before destroying the factory: the destructor waits for the
  // kubeconfig fetches in flight.
  // `env`: the clients' clocks and the wait for a kubeconfig (the real one: the IO is real).
  TalosconfigClientFactory(TalosCredentials credentials, talos::GrpcTalosClientOptions options,
                           Env& env, std::chrono::milliseconds kube_wait = std::chrono::seconds(10))
      : credentials_(std::move(credentials)),
        options_(std::move(options)),
        env_(env),
        kube_wait_(kube_wait) {}
  TalosconfigClientFactory(std::filesystem::path credentials_dir,
                           talos::GrpcTalosClientOptions options, Env& env,
                           std::chrono::milliseconds kube_wait = std::chrono::seconds(10))
      : TalosconfigClientFactory(TalosCredentials{std::move(credentials_dir), {}},
                                 std::move(options), env, kube_wait) {}
  ~TalosconfigClientFactory() override;
  // Told, each time a cluster's talosconfig is read, when its client certificate expires (the
  // daemon's talos_reconciler_client_certificate_expiry_timestamp_seconds). Set before use.
  using CertificateSeen =
      std::function<void(const std::string& cluster, std::chrono::system_clock::time_point)>;
  void OnClientCertificate(CertificateSeen seen) { on_certificate_ = std::move(seen); }
  absl::StatusOr<ClusterClients> ForProfile(const core::ClusterProfile& profile) override;
  // The nodes refuse the client certificate, or their certificates are not signed by its ca:
  // one TLS handshake per endpoint, each up to the connect timeout, ended by `options.shutdown`.
  absl::Status DiagnoseUnreachable(const core::ClusterProfile& profile) override;

 private:
  struct Entry {
    Entry(const core::ClusterProfile& profile, std::shared_ptr<talos::TalosClient> t)
        : credentials(profile.credentials), endpoints(profile.endpoints), talos(std::move(t)) {}
    // Whether the clients were made for `profile`'s credentials and endpoints: compared, not
    // keyed by a string built at every look.
    bool MadeFor(const core::ClusterProfile& profile) const {
      return credentials == profile.credentials && endpoints == profile.endpoints;
    }
    const std::string credentials;
    const std::vector<std::string> endpoints;
    const std::shared_ptr<talos::TalosClient> talos;
    Mutex mu;
    std::condition_variable_any fetched;
    std::shared_ptr<kube::KubeClient> kube ABSL_GUARDED_BY(mu);
    bool fetching ABSL_GUARDED_BY(mu) = false;
  };
  absl::StatusOr<std::shared_ptr<Entry>> EntryFor(const core::ClusterProfile& profile);
  void StartKubeFetch(const core::ClusterProfile& profile, std::shared_ptr<Entry> entry);

  const TalosCredentials credentials_;
  const talos::GrpcTalosClientOptions options_;
  Env& env_;
  const std::chrono::milliseconds kube_wait_;
  CertificateSeen on_certificate_;
  Mutex mu_;  // never held across IO
  std::unordered_map<std::string, std::shared_ptr<Entry>> by_cluster_ ABSL_GUARDED_BY(mu_);
  struct Fetch {
    std::shared_ptr<std::atomic<bool>> done;
    std::jthread thread;
  };
  // Kubeconfig fetches, reaped when done, joined on destruction.
  std::vector<Fetch> fetches_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler
