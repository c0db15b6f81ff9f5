// How a merged change's rollout stands, judged from the clusters' recorded statuses: the rule
// behind a pull request's rollout report (docs/pull-requests.md, "When a rollout report is
// final").
//
// A change is judged on the clusters it changes (its scope). For each of them:
//  - on the change (attempted it): Ready with it applied -> applied; UpgradeFailed -> failed;
//    anything else -> pending;
//  - moved past it (its applied or attempted commit merged later): applied when it applied the
//    change itself, or reached Ready on a later commit with no later change to that cluster in
//    between; superseded when a later pull request changed that cluster first (its rollout is
//    reported there); else it carries the change on: failed or pending as on the later commit;
//  - not on it yet: pending.
// The change failed when a cluster failed on it; else it is pending while a cluster is; else
// superseded when a cluster was superseded; else it succeeded. Every state but pending is
// final: a report that reached one never changes again (PullRequestFlow keeps it so), and the
// rule itself gives the same answer from any later record, so a restarted reporter agrees.
//
// Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tr::reconciler::pull_requests {

// A commit of the watched branch.
struct MergedChange {
  std::string commit;
  // The merge order: a higher rank merged later; commits of equal rank are in no known order
  // (those a restarted reporter learns from the status branch at once).
  uint64_t rank = 0;
  std::optional<int64_t> pull_request;  // none: no pull request merged it (a direct push)
  // The clusters its pull request's plan changed; none: not known (every cluster). A direct
  // push supersedes nothing: what it changed is not known, so a cluster carries on.
  std::optional<std::set<std::string>> scope;
};

enum class Outcome { kPending, kApplied, kFailed, kSuperseded };
std::string_view OutcomeName(Outcome outcome);  // "pending", "applied", "failed", "superseded"

struct ClusterVerdict {
  std::string cluster;
  Outcome outcome = Outcome::kPending;
  bool on_change = false;  // the cluster attempts this very change: its status row is its own
  std::optional<MergedChange> superseded_by{};  // kSuperseded: the change that did
};

struct RolloutVerdict {
  Outcome outcome = Outcome::kPending;          // kApplied: every cluster applied it (succeeded)
  std::vector<ClusterVerdict> clusters;         // in scope, by name
  std::optional<MergedChange> superseded_by{};  // kSuperseded: the first change that did
  bool final() const { return outcome != Outcome::kPending; }
};

// Clusters whose outcome an earlier verdict on the same change settled (anything but pending):
// kept as they were, since a cluster that moved on since may no longer show it.
using SettledClusters = std::map<std::string, ClusterVerdict>;

// The verdict on history[index]; `history` is sorted by rank. A cluster moved past the change
// only to a commit of higher rank.
RolloutVerdict JudgeRollout(const std::vector<MergedChange>& history, size_t index,
                            const std::map<std::string, core::ClusterStatus>& clusters,
                            const SettledClusters& settled = {});

}  // namespace tr::reconciler::pull_requests
