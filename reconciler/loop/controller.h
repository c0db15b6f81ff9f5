// The controller (docs/architecture.md): webhooks, timers and start-up only enqueue a cluster
// name; workers take names from a work queue and run one level-triggered reconcile each, never
// two of one cluster at once, many clusters in parallel up to `workers`. A reconcile's outcome
// decides when the cluster is looked at again: done (after the resync interval), requeue after
// a duration (a node is rebooting), transient error (capped exponential backoff with jitter),
// stalled (needs a new commit; looked at again after the resync interval), or forget (the
// cluster is gone from the repository). Resyncs are spread by `resync_spread` so clusters that
// started together (all of them, at start-up) do not resync in lockstep. Every line logged during
// a reconcile carries its cluster and a reconcile id (ReconcileLogScope).
//
// Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <unordered_map>

#include "base/env.h"
#include "base/mutex.h"
#include "reconciler/loop/work_queue.h"

namespace tr::reconciler {

struct [[nodiscard]] ReconcileOutcome {
  enum class Kind { kDone, kRequeueAfter, kTransientError, kStalled, kForget };
  Kind kind = Kind::kDone;
  std::chrono::milliseconds after{0};  // kRequeueAfter
  std::string message;
  // When the reconcile's last look at the cluster's nodes began (Env::Monotonic); none when it
  // looked at none. A change enqueued before it is one the reconcile saw (WorkQueue::AddChange).
  std::optional<Env::Instant> looked_at;

  static ReconcileOutcome Done() { return {Kind::kDone, {}, "", {}}; }
  static ReconcileOutcome RequeueAfter(std::chrono::milliseconds d) {
    return {Kind::kRequeueAfter, d, "", {}};
  }
  static ReconcileOutcome TransientError(std::string why) {
    return {Kind::kTransientError, {}, std::move(why), {}};
  }
  static ReconcileOutcome Stalled(std::string why) {
    return {Kind::kStalled, {}, std::move(why), {}};
  }
  static ReconcileOutcome Forget() { return {Kind::kForget, {}, "", {}}; }
};

class ClusterReconciler {
 public:
  virtual ~ClusterReconciler() = default;
  // One reconcile of `cluster`: re-read Git and the nodes, decide, act, record.
  virtual ReconcileOutcome Reconcile(const std::string& cluster, std::stop_token stop) = 0;
};

struct ControllerOptions {
  int workers = 4;
  std::chrono::milliseconds resync{std::chrono::minutes(5)};
  double resync_spread = 0.1;  // each resync is resync * (1 ± resync_spread)
  std::chrono::milliseconds backoff_initial{std::chrono::seconds(1)};
  std::chrono::milliseconds backoff_max{std::chrono::minutes(5)};
};

class Controller {
 public:
  using TimePoint = WorkQueue::TimePoint;

  Controller(ControllerOptions options, ClusterReconciler& reconciler, Env& env);

  // Queues `cluster` to be reconciled now (coalesced with any pending trigger).
  void Enqueue(const std::string& cluster);

  // As Enqueue, for a change of what a reconcile looks at (a node's stage, readiness, events):
  // one that comes during a reconcile of the cluster whose last look began after it runs none
  // again (WorkQueue::AddChange).
  void EnqueueChange(const std::string& cluster);

  // Reconciles every cluster due at the env's now, on the calling thread, one after another;
  // returns how many reconciles ran. Used by tests with a simulated clock.
  int RunDue(std::stop_token stop = {});

  // Runs `workers` threads taking due clusters until `stop` is requested; returns after they end.
  void Run(std::stop_token stop);

  // When the next cluster is due; nullopt when none is queued.
  std::optional<TimePoint> NextDue() const { return queue_.NextDue(); }

  // The backoff after `failures` consecutive transient errors: JitteredBackoff of
  // initial * 2^(failures-1), capped at backoff_max.
  std::chrono::milliseconds Backoff(int failures) const;

 private:
  // Reconciles `cluster` and queues its next reconcile; the caller then ends the key with the
  // look's time this returns (ReconcileOutcome::looked_at).
  std::optional<Env::Instant> Process(const std::string& cluster, std::stop_token stop);

  const ControllerOptions options_;
  ClusterReconciler& reconciler_;
  Env& env_;
  WorkQueue queue_;
  Mutex mu_;
  // Consecutive transient errors, by cluster.
  std::unordered_map<std::string, int> failures_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler
