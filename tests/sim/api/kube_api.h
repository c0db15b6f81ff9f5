// The fake Kubernetes API server of one simulated cluster: HTTPS (cpp-httplib with OpenSSL) on the
// first control plane's address, bearer-token authentication, serving what an upgrade
// orchestrator and kubectl need: /version, discovery, Nodes (list, get, merge / strategic-merge /
// JSON patch for cordon, labels and annotations), Pods (list with label and field selectors, get, delete, the eviction
// subresource honouring PodDisruptionBudgets), PodDisruptionBudgets, Leases and batch/v1 Jobs
// with their pods (kube_jobs.h), the bootstrap manifests' workloads and Talos's inventory
// ConfigMap (kube_api_manifests.h). Objects reflect
// the simulated machines (SimCluster). Lists answer with a meta.k8s.io/v1 Table when asked, as
// kubectl does.
//
// Thread-safety: the server runs its own threads; Stop may be called from any thread once.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "tests/sim/api/kube_api_manifests.h"
#include "tests/sim/common/pki.h"
#include "tests/sim/node/sim_cluster.h"

namespace httplib {
class SSLServer;
struct Request;
struct Response;
}  // namespace httplib

namespace tr::sim {

class JobStore;
class ListPager;
class WorkloadStore;

class KubeApiServer {
 public:
  // Binds address:port and starts serving. Unavailable when the address is in use, Internal for
  // bad TLS material.
  static absl::StatusOr<std::unique_ptr<KubeApiServer>> Start(SimCluster* cluster,
                                                              const std::string& address, int port,
                                                              const CertifiedKey& server_cert,
                                                              std::string token);
  ~KubeApiServer();
  KubeApiServer(const KubeApiServer&) = delete;
  KubeApiServer& operator=(const KubeApiServer&) = delete;

  void Stop();
  // "https://127.0.42.1:6443".
  const std::string& url() const { return url_; }

 private:
  KubeApiServer() = default;
  void Routes();
  void PodRoutes();    // pods, evictions, PodDisruptionBudgets (kube_api_pods.cc)
  void LeaseRoutes();  // coordination.k8s.io/v1 Leases (kube_api_pods.cc)
  // PersistentVolumes, PersistentVolumeClaims, StorageClasses of the fleet file (kube_api_pods.cc).
  void StorageRoutes();
  // Answers a list (`kind` "PodDisruptionBudgetList") of `items` at `rv`, paged as asked.
  void SendList(const httplib::Request& req, httplib::Response& res, const std::string& kind,
                const std::string& api_version, nlohmann::json items, uint64_t rv);
  void RemovedApiRoutes();  // an API a Kubernetes upgrade removes (kube_api_removed.cc)
  // GET /api/v1/nodes?watch=1: a stream of watch events, one JSON object a line.
  void WatchNodes(const httplib::Request& req, httplib::Response& res);

  // The kube-proxy DaemonSet and CoreDNS Deployment (kube_api_manifests.cc).
  void BootstrapWorkloadRoutes();
  // A server-side apply of one of them (`kind` "DaemonSet", `key` "daemonsets/kube-proxy").
  void ApplyBootstrapWorkload(const std::string& kind, const std::string& key,
                              const httplib::Request& req, httplib::Response& res);
  // Talos's inventory ConfigMap kube-system/talos-bootstrap-manifests-inventory
  // (kube_api_inventory.cc).
  void InventoryRoutes();
  // Replaces the inventory's data (creating it); the caller holds cluster_->mu().
  void WriteInventoryLocked(const nlohmann::json& data);

  SimCluster* cluster_ = nullptr;
  std::string token_;
  std::string url_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::unique_ptr<WorkloadStore> workloads_;  // Deployments, StatefulSets, DaemonSets
  std::unique_ptr<JobStore> jobs_;            // Jobs and the pods created for them
  std::unique_ptr<ListPager> pager_;          // snapshots of chunked lists
  // The bootstrap manifests' objects beyond their images; guarded by cluster_->mu().
  std::unique_ptr<BootstrapObjects> bootstrap_ = std::make_unique<BootstrapObjects>();
  std::thread thread_;
  std::atomic<bool> stopping_{false};  // ends the watches being served
};

}  // namespace tr::sim
