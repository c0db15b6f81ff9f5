// Observation (docs/architecture.md): what a cluster's nodes really run, through the Talos API
// (version, boot id, machine stage and readiness, etcd membership, health and leadership) and
// the Kubernetes API (node Ready, cordoned, kubelet version).
//
// Thread-safe when the client factory is.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "core/observed.h"
#include "core/profile.h"
#include "reconciler/cluster_clients.h"

namespace tr::reconciler {

class FleetObserver {
 public:
  virtual ~FleetObserver() = default;
  // Every node of `profile`. A node that does not answer is reported unreachable, not as an
  // error. Errors: FailedPrecondition for unusable credentials, PermissionDenied when the
  // credentials' role cannot read a node.
  virtual absl::StatusOr<core::ObservedCluster> Observe(const core::ClusterProfile& profile) = 0;
};

class TalosFleetObserver final : public FleetObserver {
 public:
  // `self_node` is the name of the node this process runs on ("" when none).
  TalosFleetObserver(ClusterClientFactory& clients, std::string self_node)
      : clients_(clients), self_node_(std::move(self_node)) {}
  absl::StatusOr<core::ObservedCluster> Observe(const core::ClusterProfile& profile) override;

 private:
  ClusterClientFactory& clients_;
  const std::string self_node_;
};

}  // namespace tr::reconciler
