// Fencing: a replica acts on a cluster only while it holds the cluster's shard (ClusterOwnership,
// shard_elector.h), checked at the last moment before each side effect, and only under the
// fencing token it claimed for the cluster when it took the shard (ClusterFences, core/fence.h).
//
// - ShardedReconciler: clusters of shards not held are skipped; on taking a shard (a new term)
//   the cluster's status is read again from the status branch, where the previous holder
//   recorded its operation in flight, before anything is decided — so the new holder resumes it
//   rather than start the node again — and claimed: recorded again under the next generation of
//   its fence. From then on the status writer's guard (StatusFileGuard) refuses any record of an
//   older generation, checked on the very tip each push replaces (the push is a compare-and-swap
//   on it), so a replica frozen while it pushed cannot land its record after it wakes, however
//   its push is retried.
// - FencedStatusStore: a record is refused with Aborted unless the shard is held and the cluster
//   claimed in this term; it is marked under way like a node call, so no give-back happens while
//   it is pushed; it carries the fence. A record the branch refuses (another replica claimed the
//   cluster since) supersedes this replica's claim: nothing more is recorded or done on the
//   cluster until it is claimed again (if the shard is still held, with a newer generation).
// - FencedExecutor: every node operation (pre-pull, etcd snapshot, install, upgrade, drain,
//   reboot, uncordon, ...) is refused the same way, before any call to a node; the reconcile
//   then retries later (ClassifyError: Aborted is "retry"). Since an operation is recorded on the
//   status branch before its node is called, a deposed replica neither records it nor performs
//   the call that record announces.
//
// Thread-safe when the wrapped parts are.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "core/fence.h"
#include "core/status.h"
#include "reconciler/features/lease/shard_elector.h"
#include "reconciler/loop/controller.h"
#include "reconciler/loop/status_store.h"
#include "reconciler/operations/executor.h"

namespace tr::reconciler::lease {

// The fence each cluster is claimed under in this replica's current term of its shard.
class ClusterFences {
 public:
  // `ownership` outlives this; `holder` is this replica's identity.
  ClusterFences(ClusterOwnership& ownership, std::string holder)
      : ownership_(ownership), holder_(std::move(holder)) {}

  ClusterOwnership& ownership() { return ownership_; }
  const std::string& holder() const { return holder_; }

  // The cluster is claimed with `fence` in `term`.
  void Claimed(const std::string& cluster, uint64_t term, core::Fence fence);
  // The fence to act and record under now: nullopt when the shard is not held, or the cluster
  // was not claimed in the current term, or its claim was superseded since.
  std::optional<core::Fence> Current(const std::string& cluster);
  // Another replica's newer claim was found on the branch.
  void Supersede(const std::string& cluster);

 private:
  struct Claim {
    uint64_t term = 0;
    core::Fence fence;
    bool superseded = false;
  };
  ClusterOwnership& ownership_;
  const std::string holder_;
  Mutex mu_;
  std::map<std::string, Claim> claims_ ABSL_GUARDED_BY(mu_);  // by cluster: one each
};

// Aborted naming the cluster, when this replica does not hold its shard now.
absl::Status CheckHeld(ClusterOwnership& ownership, const std::string& cluster);
// Aborted naming the cluster, unless it may be acted on now under this replica's fence.
absl::Status CheckFenced(ClusterFences& fences, const std::string& cluster);

// The status writer's guard with leader election: a cluster's status file is replaced only by
// a record whose fence is not older than the file's (core::FenceRefusal). A file that is no
// status (as DecodeStatusFiles would skip it) never refuses.
std::string StatusFileGuard(const std::string& path, const std::optional<std::string>& on_tip,
                            const std::optional<std::string>& update);

class FencedExecutor final : public RolloutExecutor {
 public:
  FencedExecutor(RolloutExecutor& inner, ClusterFences& fences) : inner_(inner), fences_(fences) {}
  absl::StatusOr<ActionResult> Execute(const core::ClusterProfile& profile,
                                       const core::RolloutDecision& decision,
                                       std::stop_token stop) override;
  std::optional<OutstandingStep> Outstanding(const std::string& cluster) override {
    return inner_.Outstanding(cluster);
  }
  std::string Progress(const std::string& cluster) override { return inner_.Progress(cluster); }
  std::optional<absl::StatusOr<ActionResult>> TakeFinished(const std::string& cluster) override {
    return inner_.TakeFinished(cluster);
  }

 private:
  RolloutExecutor& inner_;
  ClusterFences& fences_;
};

class FencedStatusStore final : public StatusStore {
 public:
  FencedStatusStore(StatusStore& inner, ClusterFences& fences) : inner_(inner), fences_(fences) {}
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(
      std::stop_token stop) override {
    return inner_.LoadAll(stop);
  }
  absl::Status Record(const core::ClusterStatus& status, std::stop_token stop) override;
  // RecordSoon is not overridden: it waits, as Record does. A posted record pushed after the
  // shard was given back could overwrite what the new holder recorded since.

 private:
  absl::Status RecordFenced(const core::ClusterStatus& status, std::stop_token stop);
  StatusStore& inner_;
  ClusterFences& fences_;
};

class ShardedReconciler final : public ClusterReconciler {
 public:
  // Replaces the reconciler's memory of a cluster with its status on the branch (nullopt: none).
  using Adopt =
      std::function<void(const std::string& cluster, std::optional<core::ClusterStatus> recorded)>;

  // Told of a cluster whose shard this replica does not hold (what follows its nodes stops).
  using OnNotHeld = std::function<void(const std::string& cluster)>;

  // `branch` reads and claims the status branch itself (no notification, no forge report).
  ShardedReconciler(ClusterReconciler& inner, ClusterFences& fences, StatusStore& branch,
                    Adopt adopt, OnNotHeld on_not_held = {})
      : inner_(inner),
        fences_(fences),
        branch_(branch),
        adopt_(std::move(adopt)),
        on_not_held_(std::move(on_not_held)) {}

  // Not held: `on_not_held`, then Done (the cluster is enqueued again when its shard is taken, and
  // at resync).
  // Not claimed in this term: the branch is read and the cluster claimed first
  // (TransientError when either fails).
  ReconcileOutcome Reconcile(const std::string& cluster, std::stop_token stop) override;

 private:
  // Reads the cluster's status, claims it under the next generation, adopts it; nullopt when
  // done, else the outcome to return.
  std::optional<ReconcileOutcome> TakeOver(const std::string& cluster, uint64_t term,
                                           std::stop_token stop);
  absl::Status Claim(const core::ClusterStatus& claim, std::stop_token stop);

  ClusterReconciler& inner_;
  ClusterFences& fences_;
  StatusStore& branch_;
  const Adopt adopt_;
  const OnNotHeld on_not_held_;
};

}  // namespace tr::reconciler::lease
