// The Kubernetes Job that runs `talos-reconciler upgrade-k8s` for one cluster and one target
// (`--kubernetes-upgrade-mode job`), and what its status says.
//
// The Job carries everything the command needs, so it runs without the daemon:
//   - the profile and the support matrix as pod annotations, projected into files by a
//     downwardAPI volume (<dir>/clusters/<cluster>.yaml and <dir>/reconciler.yaml: the
//     layout of `--repo`);
//   - the cluster's talosconfig Secret mounted as <credentials-dir>/<credentials>/talosconfig;
//   - restartPolicy Never, a podFailurePolicy that fails the Job at once on exit codes 1-3 (look
//     first), counts 4 and anything else (a kill) against backoffLimit (run again: it resumes)
//     and ignores pods disrupted by eviction or preemption; activeDeadlineSeconds;
//     ttlSecondsAfterFinished; the last line in the termination message.
// Its name is a function of the cluster and the target only, so whoever looks again (the same
// daemon, a restarted one, another replica) finds the same Job instead of creating a second.
//
// Pure functions over JSON text; thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/profile.h"
#include "core/support_matrix.h"
#include "core/version.h"
#include "reconciler/operations/k8s_upgrade/upgrade_runner.h"

namespace tr::reconciler::k8s_job {

inline constexpr char kContainerName[] = "upgrade-k8s";
inline constexpr char kClusterLabel[] = "talos-reconciler.dev/cluster";
inline constexpr char kTargetLabel[] = "talos-reconciler.dev/kubernetes-version";
inline constexpr char kComponentLabel[] = "app.kubernetes.io/component";
inline constexpr char kComponentValue[] = "kubernetes-upgrade";

struct UpgradeJobSettings {
  std::string namespace_name;
  std::string image;        // the talos-reconciler image
  std::string secret_name;  // the Secret with key `talosconfig` for the profile's credentials
  int backoff_limit = 6;
  std::chrono::seconds active_deadline{2 * 3600};
  std::chrono::seconds ttl_after_finished{3600};
  std::chrono::milliseconds poll_interval{1000};
  std::chrono::milliseconds static_pod_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds kubelet_timeout{std::chrono::minutes(3)};
  bool prune_manifests = true;  // false: the Job runs upgrade-k8s --manifests-no-prune
};

// "k8s-upgrade-<cluster>-v1-35-0": a DNS label of at most 63 characters; a long cluster name is
// cut and followed by a hash of the whole name, so two clusters never share a Job.
std::string UpgradeJobName(const std::string& cluster, const core::Version& target);

// The value of kClusterLabel for `cluster` (a label value has at most 63 characters).
std::string ClusterLabelValue(const std::string& cluster);

// The batch/v1 Job as JSON text.
std::string UpgradeJobJson(const core::ClusterProfile& profile, const core::Version& target,
                           const core::SupportMatrix& matrix, const UpgradeJobSettings& settings);

// What a Job and its pods (a PodList, JSON text) say: running (with the attempt), succeeded,
// or failed with the exit code's status class, component and node from the last pod's
// termination message. `retry` says a failure is worth a new Job (an API did not answer or the
// run was stopped, exit code 4; the deadline), as the in-process runner retries them.
struct JobReading {
  k8s_upgrade::UpgradeTaskStatus task;
  bool retry = false;
  bool deleting = false;  // metadata.deletionTimestamp is set
  std::string running_pod;  // while running: the pod whose container has not terminated, if any
};
absl::StatusOr<JobReading> ReadUpgradeJob(const std::string& job_json,
                                          const std::string& pods_json);

// The progress in the tail of the container's log, in the words of the in-process mode: the last
// line `upgrade-k8s` printed as "<phase> <done>/<total>: ..." gives "<phase> <done>/<total>"
// ("kubelets 3/5"); "" when there is none yet.
std::string ProgressOfLog(std::string_view log);

}  // namespace tr::reconciler::k8s_job
