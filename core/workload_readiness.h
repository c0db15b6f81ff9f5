// Whether a Kubernetes workload has rolled out, by the rules `kubectl rollout status` applies:
// the controller observed the current generation, every desired replica (or, for a DaemonSet,
// every node that should run it) runs the current template, no old replica is left, and every
// one is ready and available. Used by health checks of type kubernetes.
//
// Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <string>

namespace tr::core {

struct WorkloadStatus {
  std::string kind;  // Deployment | StatefulSet | DaemonSet
  std::string namespace_name;
  std::string name;
  int64_t generation = 0;           // metadata.generation
  int64_t observed_generation = 0;  // status.observedGeneration
  int64_t desired = 0;  // spec.replicas (default 1); DaemonSet: status.desiredNumberScheduled
  int64_t current = 0;  // status.replicas; DaemonSet: status.currentNumberScheduled
  int64_t updated = 0;  // status.updatedReplicas; DaemonSet: status.updatedNumberScheduled
  int64_t ready = 0;    // status.readyReplicas; DaemonSet: status.numberReady
  int64_t available = 0;  // status.availableReplicas; DaemonSet: status.numberAvailable
};

// "" when rolled out; otherwise why not, naming the workload:
// "Deployment rook-ceph/rook-ceph-mgr-a: 1 of 2 updated".
std::string WorkloadNotReady(const WorkloadStatus& workload);

}  // namespace tr::core
