#include "reconciler/operations/etcd_voters.h"

#include <algorithm>

namespace tr::reconciler {

bool EtcdVoters::Known(const std::string& cluster, uint64_t member_id) const {
  MutexLock lock(mu_);
  auto it = voters_.find(cluster);
  return it != voters_.end() &&
         std::find(it->second.begin(), it->second.end(), member_id) != it->second.end();
}

void EtcdVoters::Replace(const std::string& cluster, const std::vector<talos::EtcdMember>& list) {
  std::vector<uint64_t> voters;
  for (const talos::EtcdMember& member : list) {
    if (!member.is_learner) voters.push_back(member.id);
  }
  MutexLock lock(mu_);
  voters_[cluster] = std::move(voters);
}

}  // namespace tr::reconciler
