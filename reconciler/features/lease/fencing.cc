#include "reconciler/features/lease/fencing.h"

#include "core/shards.h"
#include "fmt/format.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::lease {

namespace {

absl::Status NotHeld(const std::string& cluster) {
  return absl::AbortedError(
      fmt::format("this replica no longer holds the lease of {}'s shard; not acting", cluster));
}

absl::Status NotClaimed(const std::string& cluster) {
  return absl::AbortedError(fmt::format(
      "{} is not claimed under this replica's fence (taken over by another replica, or not "
      "read since its shard was taken); not acting",
      cluster));
}

// The fence of a status file's text; nullopt when it has none, or is no status the reconciler
// would read back (the same rules as a takeover's read: DecodeStatusFiles).
std::optional<core::Fence> FenceOf(const std::string& path, const std::string& text) {
  DecodedStatuses decoded = DecodeStatusFiles(gitsource::StatusFiles{{{path, text}}, {}});
  if (decoded.statuses.size() != 1) return std::nullopt;
  return decoded.statuses.begin()->second.fence;
}

}  // namespace

void ClusterFences::Claimed(const std::string& cluster, uint64_t term, core::Fence fence) {
  MutexLock lock(mu_);
  claims_[cluster] = Claim{term, std::move(fence), false};
}

std::optional<core::Fence> ClusterFences::Current(const std::string& cluster) {
  const std::optional<uint64_t> term = ownership_.Term(cluster);
  if (!term) return std::nullopt;
  MutexLock lock(mu_);
  const auto it = claims_.find(cluster);
  if (it == claims_.end() || it->second.term != *term || it->second.superseded) {
    return std::nullopt;
  }
  return it->second.fence;
}

void ClusterFences::Supersede(const std::string& cluster) {
  MutexLock lock(mu_);
  if (auto it = claims_.find(cluster); it != claims_.end()) it->second.superseded = true;
}

absl::Status CheckHeld(ClusterOwnership& ownership, const std::string& cluster) {
  if (ownership.Term(cluster)) return absl::OkStatus();
  return NotHeld(cluster);
}

absl::Status CheckFenced(ClusterFences& fences, const std::string& cluster) {
  if (absl::Status held = CheckHeld(fences.ownership(), cluster); !held.ok()) return held;
  if (!fences.Current(cluster)) return NotClaimed(cluster);
  return absl::OkStatus();
}

std::string StatusFileGuard(const std::string& path, const std::optional<std::string>& on_tip,
                            const std::optional<std::string>& update) {
  if (!on_tip || !update) return "";
  return core::FenceRefusal(FenceOf(path, *on_tip), FenceOf(path, *update));
}

absl::StatusOr<ActionResult> FencedExecutor::Execute(const core::ClusterProfile& profile,
                                                     const core::RolloutDecision& decision,
                                                     std::stop_token stop) {
  ClusterOwnership& ownership = fences_.ownership();
  if (!ownership.BeginActing(profile.name)) return NotHeld(profile.name);
  absl::StatusOr<ActionResult> result = fences_.Current(profile.name)
                                            ? inner_.Execute(profile, decision, stop)
                                            : NotClaimed(profile.name);
  ownership.EndActing(profile.name);
  return result;
}

// A record is an action too: the shard is not given back while it is being pushed. Otherwise a
// record checked before a give-back and pushed after it would overwrite what the new holder
// recorded since (the fence refuses that too; this keeps the holder from being refused).
absl::Status FencedStatusStore::Record(const core::ClusterStatus& status, std::stop_token stop) {
  ClusterOwnership& ownership = fences_.ownership();
  if (!ownership.BeginActing(status.cluster)) return NotHeld(status.cluster);
  absl::Status recorded = RecordFenced(status, stop);
  ownership.EndActing(status.cluster);
  return recorded;
}

absl::Status FencedStatusStore::RecordFenced(const core::ClusterStatus& status,
                                             std::stop_token stop) {
  std::optional<core::Fence> fence = fences_.Current(status.cluster);
  if (!fence) return NotClaimed(status.cluster);
  core::ClusterStatus fenced = status;
  fenced.fence = *std::move(fence);
  absl::Status recorded = inner_.Record(fenced, stop);
  if (IsFenceRefused(recorded)) {
    fences_.Supersede(status.cluster);
    ModuleLogger("lease")->warn("step=superseded cluster={} reason={}", LogValue(status.cluster),
                                LogValue(std::string(recorded.message())));
  }
  return recorded;
}

ReconcileOutcome ShardedReconciler::Reconcile(const std::string& cluster, std::stop_token stop) {
  const std::optional<uint64_t> term = fences_.ownership().Term(cluster);
  if (!term) {
    if (on_not_held_) on_not_held_(cluster);
    return ReconcileOutcome::Done();
  }
  if (!fences_.Current(cluster)) {
    if (std::optional<ReconcileOutcome> failed = TakeOver(cluster, *term, stop)) return *failed;
  }
  return inner_.Reconcile(cluster, stop);
}

std::optional<ReconcileOutcome> ShardedReconciler::TakeOver(const std::string& cluster,
                                                            uint64_t term, std::stop_token stop) {
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> branch = branch_.LoadAll(stop);
  if (!branch.ok()) {
    return ReconcileOutcome::TransientError(
        fmt::format("cannot read the status branch after taking the shard: {}",
                    std::string(branch.status().message())));
  }
  std::optional<core::ClusterStatus> recorded;
  if (auto it = branch->find(cluster); it != branch->end()) recorded = it->second;
  const core::Fence fence{core::NextFenceGeneration(recorded ? recorded->fence : std::nullopt),
                          fences_.holder()};
  // The claim: from now on no record of an older generation lands. A cluster never recorded has
  // nothing to claim; its first record carries the fence (and a replica that records the same
  // generation first wins: the other is refused and claims the next).
  if (recorded) {
    core::ClusterStatus claim = *recorded;
    claim.fence = fence;
    if (absl::Status claimed = Claim(claim, stop); !claimed.ok()) {
      return ReconcileOutcome::TransientError(
          fmt::format("cannot claim the cluster's status after taking the shard: {}",
                      std::string(claimed.message())));
    }
    recorded->fence.reset();
  }
  fences_.Claimed(cluster, term, fence);
  ModuleLogger("lease")->info("step=adopt cluster={} term={} generation={} recorded={}",
                              LogValue(cluster), term, fence.generation, recorded.has_value());
  adopt_(cluster, std::move(recorded));
  return std::nullopt;
}

// Under way like any record: the shard is not given back in the middle of it.
absl::Status ShardedReconciler::Claim(const core::ClusterStatus& claim, std::stop_token stop) {
  ClusterOwnership& ownership = fences_.ownership();
  if (!ownership.BeginActing(claim.cluster)) return NotHeld(claim.cluster);
  absl::Status claimed = branch_.Record(claim, stop);
  ownership.EndActing(claim.cluster);
  return claimed;
}

}  // namespace tr::reconciler::lease
