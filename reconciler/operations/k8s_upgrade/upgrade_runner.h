// Kubernetes upgrades as supervised long-running tasks of the daemon: at most one per cluster,
// each on its own thread, outside the reconcile loop. The rollout reconciler asks on every pass
// (Ensure) and reports what it hears: running with its progress ("kubelets 3/5"), done, or
// failed with the component and node.
//
// A task that failed because an API did not answer is started again on the next Ensure (the
// upgrade resumes: nothing is applied twice); any other failure stays until the target changes
// or the profile asks for a retry (a new retry token; `talos-reconciler retry`).
// After a daemon crash the next Ensure starts a new task, which resumes the same way.
//
// Thread-safe. The destructor stops every task and waits for it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/env.h"
#include "base/mutex.h"
#include "core/profile.h"
#include "core/support_matrix.h"
#include "reconciler/clients/cluster_clients.h"
#include "reconciler/operations/k8s_upgrade/k8s_upgrade.h"

namespace tr::reconciler::k8s_upgrade {

struct UpgradeTaskStatus {
  enum class State { kRunning, kSucceeded, kFailed };
  State state = State::kRunning;
  std::string target;      // "1.35.0"
  std::string progress;    // "kubelets 3/5"; "" before the first step
  UpgradeOutcome outcome;  // when finished
  std::string retry_token;  // the profile's when the task started (ClusterProfile::retry_token)
};

class KubernetesUpgradeRunner {
 public:
  virtual ~KubernetesUpgradeRunner() = default;
  // The task upgrading `profile`'s cluster to `target`, started if none runs or has finished
  // for that target.
  virtual UpgradeTaskStatus Ensure(const core::ClusterProfile& profile, const core::Version& target,
                                   const core::SupportMatrix& matrix) = 0;
  // Whether a task for `cluster` and `target` was started by this process (running, done or
  // failed): the step is then seen through, and the start checks do not hold it again.
  virtual bool Started(const std::string& cluster, const core::Version& target) = 0;
};

struct InProcessRunnerOptions {
  std::chrono::milliseconds poll_interval{1000};
  std::chrono::milliseconds static_pod_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds kubelet_timeout{std::chrono::minutes(3)};
  bool prune_manifests = true;  // UpgradeOptions::prune_manifests
  // Fencing (leader election): OK while this replica may change `cluster`; asked before each
  // change a task makes (UpgradeOptions::before_change). Empty: always allowed.
  std::function<absl::Status(const std::string& cluster)> may_change;
};

class InProcessUpgradeRunner final : public KubernetesUpgradeRunner {
 public:
  InProcessUpgradeRunner(ClusterClientFactory& clients, Env& env, InProcessRunnerOptions options)
      : clients_(clients), env_(env), options_(options) {}
  ~InProcessUpgradeRunner() override;

  UpgradeTaskStatus Ensure(const core::ClusterProfile& profile, const core::Version& target,
                           const core::SupportMatrix& matrix) override;
  bool Started(const std::string& cluster, const core::Version& target) override;

 private:
  struct Task {
    UpgradeTaskStatus status;  // read and written under the runner's mu_
    std::jthread thread;
  };
  void Start(Task& task, const core::ClusterProfile& profile, const core::Version& target,
             const core::SupportMatrix& matrix);

  ClusterClientFactory& clients_;
  Env& env_;
  const InProcessRunnerOptions options_;
  Mutex mu_;
  std::map<std::string, std::shared_ptr<Task>> tasks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler::k8s_upgrade
