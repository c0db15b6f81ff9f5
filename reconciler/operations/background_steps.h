// Long rollout steps off the controller's workers. Pre-pulling an installer image, installing
// it and draining a node take minutes (a registry, a disk, --drain-timeout); run on a worker
// they would leave too few workers for the other clusters. BackgroundSteps wraps an executor:
// the first Execute of such a step starts it on a thread of its own and answers
// `in_progress`; the reconcile requeues on the node poll interval, and a later Execute of the
// same step (same cluster, action, node and image) returns its result once it is done, and
// `on_done` (when given) is told the step's cluster as soon as it is, so that the reconcile
// need not wait out the poll interval to collect it. While a step runs, its `in_progress`
// answer carries what holds it now (the executor's Progress: the pod and budget a drain waits
// on). Other actions run inline.
//
// One action per cluster at a time: while a step of a cluster runs, every other action of that
// cluster — another node's install, a drain, a reboot, an uncordon — answers `in_progress`
// and is not started; the reconcile waits (RolloutReconciler holds even the decisions that
// only record, such as starting a node). A step that finished but is no longer asked for is
// dropped when the cluster's next action comes, unless TakeFinished takes it first. Nothing is kept
// across a restart: the rollout state machine decides the step again from what it recorded, and
// each of these steps is safe to repeat (a pull or drain is idempotent; a second install either
// waits for the first, which Talos reports as already in progress, or rewrites the same slot).
//
// Thread-safe. The destructor asks every step to stop and waits for them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "reconciler/operations/executor.h"

namespace tr::reconciler {

class BackgroundSteps final : public RolloutExecutor {
 public:
  // Called with the step's cluster on the step's thread when a step finishes (not when it was
  // asked to stop). Must be quick and must not call back into this object.
  using OnDone = std::function<void(const std::string& cluster)>;

  explicit BackgroundSteps(RolloutExecutor& inner, OnDone on_done = {})
      : inner_(inner), on_done_(std::move(on_done)) {}
  ~BackgroundSteps() override;
  BackgroundSteps(const BackgroundSteps&) = delete;
  BackgroundSteps& operator=(const BackgroundSteps&) = delete;

  absl::StatusOr<ActionResult> Execute(const core::ClusterProfile& profile,
                                       const core::RolloutDecision& decision,
                                       std::stop_token stop) override;

  std::optional<OutstandingStep> Outstanding(const std::string& cluster) override;
  // The inner executor's; an `in_progress` answer of a running step carries it as `detail`.
  std::string Progress(const std::string& cluster) override;
  std::optional<absl::StatusOr<ActionResult>> TakeFinished(const std::string& cluster) override;

 private:
  struct Step;
  void RetireLocked(std::shared_ptr<Step> step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The result of the cluster's step when it is done, which leaves running_.
  std::optional<absl::StatusOr<ActionResult>> TakeIfDoneLocked(const std::string& cluster)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // True while a step of `cluster` other than `key` runs; a finished one is dropped.
  bool OtherStepRunningLocked(const std::string& cluster, const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  RolloutExecutor& inner_;
  const OnDone on_done_;
  Mutex mu_;
  std::map<std::string, std::shared_ptr<Step>> running_ ABSL_GUARDED_BY(mu_);  // by cluster
  // Asked to stop, not yet joined.
  std::vector<std::shared_ptr<Step>> retired_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler
