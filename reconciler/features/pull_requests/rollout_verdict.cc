#include "reconciler/features/pull_requests/rollout_verdict.h"

namespace tr::reconciler::pull_requests {
namespace {

std::optional<size_t> IndexOf(const std::vector<MergedChange>& history, const std::string& commit) {
  if (commit.empty()) return std::nullopt;
  for (size_t i = 0; i < history.size(); ++i) {
    if (history[i].commit == commit) return i;
  }
  return std::nullopt;
}

bool ChangesCluster(const MergedChange& change, const std::string& cluster) {
  if (!change.pull_request) return false;
  return !change.scope || change.scope->contains(cluster);
}

// The first change merged after history[after] and before history[through] (or that one)
// that changed `cluster`.
std::optional<MergedChange> FirstChangeTo(const std::vector<MergedChange>& history, size_t after,
                                          size_t through, const std::string& cluster) {
  for (size_t i = 0; i < history.size(); ++i) {
    const bool between = history[i].rank > history[after].rank &&
                         (history[i].rank < history[through].rank || i == through);
    if (between && ChangesCluster(history[i], cluster)) return history[i];
  }
  return std::nullopt;
}

// A cluster's outcome on the commit it attempts.
Outcome OnAttempted(const core::ClusterStatus& status) {
  if (status.phase == core::ClusterPhase::kReady &&
      status.desired_commit_applied == status.desired_commit_attempted) {
    return Outcome::kApplied;
  }
  if (status.phase == core::ClusterPhase::kUpgradeFailed) return Outcome::kFailed;
  return Outcome::kPending;
}

ClusterVerdict JudgeCluster(const std::vector<MergedChange>& history, size_t index,
                            const std::string& cluster, const core::ClusterStatus& status) {
  ClusterVerdict v;
  v.cluster = cluster;
  const std::string& commit = history[index].commit;
  if (status.desired_commit_attempted == commit) {
    v.on_change = true;
    v.outcome = OnAttempted(status);
    return v;
  }
  if (status.desired_commit_applied == commit) {
    v.outcome = Outcome::kApplied;
    return v;
  }
  // Moved past the change: to the commit it applied since, else the one it attempts.
  for (const std::string* later :
       {&status.desired_commit_applied, &status.desired_commit_attempted}) {
    const std::optional<size_t> at = IndexOf(history, *later);
    if (!at || history[*at].rank <= history[index].rank) continue;
    v.superseded_by = FirstChangeTo(history, index, *at, cluster);
    if (v.superseded_by) {
      v.outcome = Outcome::kSuperseded;
    } else {
      v.outcome = later == &status.desired_commit_applied ? Outcome::kApplied : OnAttempted(status);
    }
    return v;
  }
  return v;  // not on it yet
}

}  // namespace

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPending:
      return "pending";
    case Outcome::kApplied:
      return "applied";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kSuperseded:
      return "superseded";
  }
  return "unknown";
}

RolloutVerdict JudgeRollout(const std::vector<MergedChange>& history, size_t index,
                            const std::map<std::string, core::ClusterStatus>& clusters,
                            const SettledClusters& settled) {
  RolloutVerdict verdict;
  const MergedChange& change = history.at(index);
  bool pending = false, failed = false;
  for (const auto& [name, status] : clusters) {
    if (change.scope && !change.scope->contains(name)) continue;
    auto earlier = settled.find(name);
    ClusterVerdict v =
        earlier != settled.end() ? earlier->second : JudgeCluster(history, index, name, status);
    v.on_change = status.desired_commit_attempted == change.commit;
    failed = failed || v.outcome == Outcome::kFailed;
    pending = pending || v.outcome == Outcome::kPending;
    if (v.superseded_by &&
        (!verdict.superseded_by || v.superseded_by->rank < verdict.superseded_by->rank)) {
      verdict.superseded_by = v.superseded_by;
    }
    verdict.clusters.push_back(std::move(v));
  }
  verdict.outcome = failed                  ? Outcome::kFailed
                    : pending               ? Outcome::kPending
                    : verdict.superseded_by ? Outcome::kSuperseded
                                            : Outcome::kApplied;
  return verdict;
}

}  // namespace tr::reconciler::pull_requests
