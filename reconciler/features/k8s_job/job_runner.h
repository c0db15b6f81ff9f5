// Kubernetes upgrades as Kubernetes Jobs (`--kubernetes-upgrade-mode job`): instead of a thread
// of the daemon, a batch/v1 Job in the reconciler's own namespace runs `talos-reconciler
// upgrade-k8s` (upgrade_job.h). Each Ensure looks at the Job and its pods through the API:
//   - no Job yet: the fence is asked (leader election: may this replica change the cluster?),
//     then the Job is created; 409 AlreadyExists means someone created it first, and it is
//     adopted (a restarted daemon, another replica);
//   - running: "Job <name> running, attempt 2: kubelets 3/5", the progress from the tail of
//     the running pod's log (pods/log; without it, or before a step, the part after ':' is left
//     out);
//   - Complete: succeeded; the Job is deleted (propagationPolicy Background: its pods too) and
//     the result remembered;
//   - Failed on exit code 1-3 (podFailurePolicy): failed with the component and node of the
//     pod's termination message; the Job is kept for `kubectl logs` until its TTL, or until the
//     profile asks for a retry (its talos-reconciler.dev/retry annotation differs from the
//     Job's): then it is deleted and the next Ensure creates a new one;
//   - Failed otherwise (backoffLimit spent on exit code 4 or kills, activeDeadlineSeconds): the
//     Job is deleted and the next Ensure creates a new one, which resumes.
// The Job runs on when the daemon dies; a restarted daemon adopts it by its name.
//
// Thread-safe: calls from several reconcile workers at once (for different clusters).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "base/mutex.h"
#include "reconciler/clients/kube/kube_client.h"
#include "reconciler/features/k8s_job/upgrade_job.h"
#include "reconciler/operations/k8s_upgrade/upgrade_runner.h"

namespace tr::reconciler::k8s_job {

struct JobRunnerOptions {
  UpgradeJobSettings job;                      // secret_name is taken from `secrets`
  std::map<std::string, std::string> secrets;  // a profile's credentials → its Secret
  // Fencing (leader election): OK while this replica may change `cluster`; asked before a Job
  // is created. Empty: always allowed.
  std::function<absl::Status(const std::string& cluster)> may_change;
};

class JobUpgradeRunner final : public k8s_upgrade::KubernetesUpgradeRunner {
 public:
  // `kube` (not owned) is the API of the cluster the reconciler runs in.
  JobUpgradeRunner(kube::KubeClient& kube, JobRunnerOptions options)
      : kube_(kube), options_(std::move(options)) {}

  k8s_upgrade::UpgradeTaskStatus Ensure(const core::ClusterProfile& profile,
                                        const core::Version& target,
                                        const core::SupportMatrix& matrix) override;
  // True when this process created, adopted or finished the Job, or the API has it.
  bool Started(const std::string& cluster, const core::Version& target) override;

 private:
  std::string JobPath(const std::string& name) const;
  // Creates the Job (after the fence); the Job's JSON as it is now.
  absl::StatusOr<std::string> Create(const core::ClusterProfile& profile,
                                     const core::Version& target,
                                     const core::SupportMatrix& matrix);
  k8s_upgrade::UpgradeTaskStatus Follow(const core::ClusterProfile& profile,
                                        const std::string& name, const std::string& job_json,
                                        const core::Version& target);
  // Adds the progress of `pod`'s log to a running `task`; a log that cannot be read adds nothing.
  void AddLogProgress(const std::string& cluster, const std::string& pod,
                      k8s_upgrade::UpgradeTaskStatus& task);

  kube::KubeClient& kube_;
  const JobRunnerOptions options_;
  Mutex mu_;
  // Per cluster: the last finished Job's result (its Job may be gone).
  std::map<std::string, k8s_upgrade::UpgradeTaskStatus> finished_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> seen_ ABSL_GUARDED_BY(mu_);  // cluster → target
};

}  // namespace tr::reconciler::k8s_job
