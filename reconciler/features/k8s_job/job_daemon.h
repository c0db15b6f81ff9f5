// The daemon's side of `--kubernetes-upgrade-mode job`: the Kubernetes API of the cluster the
// reconciler runs in (the one of the Leases: --kubeconfig or the pod's service account), the
// namespace of the Jobs and their settings, from the daemon configuration.
//
// Thread-safety: the runner returned is thread-safe.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "reconciler/features/k8s_job/job_flags.h"
#include "reconciler/operations/k8s_upgrade/upgrade_runner.h"

namespace tr::reconciler::k8s_job {

// The Jobs of `flags` on the Kubernetes API of `kubeconfig` (empty: the in-cluster service
// account), looked at every `poll_interval` (at most 1 s). InvalidArgument for unusable
// Kubernetes credentials (see lease/lease_endpoint.h). `may_change` is the fence (empty
// without leader election). `prune_manifests` false: the Jobs run with --manifests-no-prune.
absl::StatusOr<std::unique_ptr<k8s_upgrade::KubernetesUpgradeRunner>> OpenJobUpgrades(
    const JobFlags& flags, const std::filesystem::path& kubeconfig,
    std::chrono::milliseconds poll_interval, Env& env,
    std::function<absl::Status(const std::string& cluster)> may_change,
    bool prune_manifests = true);

}  // namespace tr::reconciler::k8s_job
