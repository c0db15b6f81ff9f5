// Fencing: a replica acts on a cluster only while it holds the cluster's shard (ClusterOwnership,
// shard_elector.h), checked at the last moment before each side effect.
//
// - FencedExecutor: every node operation (pre-pull, etcd snapshot, install, upgrade, drain,
//   reboot, uncordon, ...) is refused with Aborted, before any call to a node, unless the shard
//   is held; the reconcile then retries later (ClassifyError: Aborted is "retry").
// - FencedStatusStore: a record is refused the same way (and marked under way like a node call,
//   so no give-back happens while it is pushed), so a deposed replica neither writes
//   status nor, since an operation is recorded on the status branch (pushed fast-forward only)
//   before its node is called, goes on to the call that record announces.
// - ShardedReconciler: clusters of shards not held are skipped; on taking a shard (a new term)
//   the cluster's status is read again from the status branch, where the previous holder
//   recorded its operation in flight, before anything is decided — so the new holder resumes it
//   rather than start the node again.
//
// Thread-safe when the wrapped parts are.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "core/status.h"
#include "reconciler/controller.h"
#include "reconciler/executor.h"
#include "reconciler/lease/shard_elector.h"
#include "reconciler/status_store.h"

namespace tr::reconciler::lease {

// Aborted naming the cluster, when this replica does not hold its shard now.
absl::Status CheckHeld(ClusterOwnership& ownership, const std::string& cluster);

class FencedExecutor final : public RolloutExecutor {
 public:
  FencedExecutor(RolloutExecutor& inner, ClusterOwnership& ownership)
      : inner_(inner), ownership_(ownership) {}
  absl::StatusOr<ActionResult> Execute(const core::ClusterProfile& profile,
                                       const core::RolloutDecision& decision,
                                       std::stop_token stop) override;
  std::optional<OutstandingStep> Outstanding(const std::string& cluster) override {
    return inner_.Outstanding(cluster);
  }

 private:
  RolloutExecutor& inner_;
  ClusterOwnership& ownership_;
};

class FencedStatusStore final : public StatusStore {
 public:
  FencedStatusStore(StatusStore& inner, ClusterOwnership& ownership)
      : inner_(inner), ownership_(ownership) {}
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(
      std::stop_token stop) override {
    return inner_.LoadAll(stop);
  }
  absl::Status Record(const core::ClusterStatus& status, std::stop_token stop) override;
  // RecordSoon is not overridden: it waits, as Record does. A posted record pushed after the
  // shard was given back could overwrite what the new holder recorded since.

 private:
  StatusStore& inner_;
  ClusterOwnership& ownership_;
};

class ShardedReconciler final : public ClusterReconciler {
 public:
  // Replaces the reconciler's memory of a cluster with its status on the branch (nullopt: none).
  using Adopt =
      std::function<void(const std::string& cluster, std::optional<core::ClusterStatus> recorded)>;

  ShardedReconciler(ClusterReconciler& inner, ClusterOwnership& ownership, StatusStore& branch,
                    Adopt adopt)
      : inner_(inner), ownership_(ownership), branch_(branch), adopt_(std::move(adopt)) {}

  // Not held: Done (the cluster is enqueued again when its shard is taken, and at resync).
  // A new term: the branch is read first (TransientError when it cannot be).
  ReconcileOutcome Reconcile(const std::string& cluster, std::stop_token stop) override;

 private:
  ClusterReconciler& inner_;
  ClusterOwnership& ownership_;
  StatusStore& branch_;
  const Adopt adopt_;
  Mutex mu_;
  std::map<std::string, uint64_t> adopted_term_ ABSL_GUARDED_BY(mu_);  // per cluster
};

}  // namespace tr::reconciler::lease
