// What the drain forecast reads from a cluster's Kubernetes API: nodes, pods (every
// namespace), PodDisruptionBudgets, PersistentVolumes, their claims and the storage classes.
// Read only; every list is paged (`limit`/`continue`, as kubectl does) so that a page, not the
// whole cluster, is held as JSON at a time, and a cluster larger than `max_pods` is refused
// rather than read.
//
// Thread-compatible (the client is thread-safe).
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "core/disruption_types.h"
#include "reconciler/clients/kube/kube_client.h"

namespace tr::reconciler::kube {

struct WorkloadReadLimits {
  size_t page = 500;         // items per list request
  size_t max_pods = 50'000;  // more: ResourceExhausted, nothing forecast
};

// The cluster's workloads; the client's errors (PermissionDenied when the reads are not
// granted) prefixed with what was being listed, ResourceExhausted beyond `max_pods`.
absl::StatusOr<core::ClusterWorkloads> ReadClusterWorkloads(KubeClient& client,
                                                            const WorkloadReadLimits& limits = {});

}  // namespace tr::reconciler::kube
