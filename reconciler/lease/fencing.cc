#include "reconciler/lease/fencing.h"

#include "core/shards.h"
#include "fmt/format.h"
#include "reconciler/logging.h"

namespace tr::reconciler::lease {

namespace {

absl::Status NotHeld(const std::string& cluster) {
  return absl::AbortedError(
      fmt::format("this replica no longer holds the lease of {}'s shard; not acting", cluster));
}

}  // namespace

absl::Status CheckHeld(ClusterOwnership& ownership, const std::string& cluster) {
  if (ownership.Term(cluster)) return absl::OkStatus();
  return NotHeld(cluster);
}

absl::StatusOr<ActionResult> FencedExecutor::Execute(const core::ClusterProfile& profile,
                                                     const core::RolloutDecision& decision,
                                                     std::stop_token stop) {
  if (!ownership_.BeginActing(profile.name)) return NotHeld(profile.name);
  absl::StatusOr<ActionResult> result = inner_.Execute(profile, decision, stop);
  ownership_.EndActing(profile.name);
  return result;
}

// A record is an action too: the shard is not given back while it is being pushed. Otherwise a
// record checked before a give-back and pushed after it (the writer rebases on a refusal) would
// overwrite what the new holder recorded since.
absl::Status FencedStatusStore::Record(const core::ClusterStatus& status, std::stop_token stop) {
  if (!ownership_.BeginActing(status.cluster)) return NotHeld(status.cluster);
  absl::Status recorded = inner_.Record(status, stop);
  ownership_.EndActing(status.cluster);
  return recorded;
}

ReconcileOutcome ShardedReconciler::Reconcile(const std::string& cluster, std::stop_token stop) {
  const std::optional<uint64_t> term = ownership_.Term(cluster);
  if (!term) return ReconcileOutcome::Done();
  bool fresh = false;
  {
    MutexLock lock(mu_);
    auto it = adopted_term_.find(cluster);
    fresh = it == adopted_term_.end() || it->second != *term;
  }
  if (fresh) {
    absl::StatusOr<std::map<std::string, core::ClusterStatus>> branch = branch_.LoadAll(stop);
    if (!branch.ok()) {
      return ReconcileOutcome::TransientError(
          fmt::format("cannot read the status branch after taking the shard: {}",
                      std::string(branch.status().message())));
    }
    auto it = branch->find(cluster);
    adopt_(cluster,
           it == branch->end() ? std::nullopt : std::optional<core::ClusterStatus>(it->second));
    ModuleLogger("lease")->info("step=adopt term={} recorded={}", *term, it != branch->end());
    MutexLock lock(mu_);
    adopted_term_[cluster] = *term;
  }
  return inner_.Reconcile(cluster, stop);
}

}  // namespace tr::reconciler::lease
