// What the last proposal pass made, by cluster: the status of each cluster names the proposal
// that concerns it (core::ProposalRef). Written by the proposer, read by the reconcile of each
// cluster as it builds the status.
//
// Thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "core/status.h"

namespace tr::reconciler::proposals {

class ProposalBoard {
 public:
  // Replaces everything the board holds.
  void Set(std::map<std::string, core::ProposalRef> by_cluster) {
    MutexLock lock(mu_);
    by_cluster_ = std::move(by_cluster);
  }
  std::optional<core::ProposalRef> For(const std::string& cluster) const {
    MutexLock lock(mu_);
    auto it = by_cluster_.find(cluster);
    if (it == by_cluster_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable Mutex mu_;
  std::map<std::string, core::ProposalRef> by_cluster_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler::proposals
