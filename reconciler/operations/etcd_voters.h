// EtcdVoters: which etcd members each cluster's last member list held as voters, kept between
// looks, so that a look asks `EtcdMemberList` only for a member it does not know as a voter.
//
// Why an older list holds for its voters: etcd promotes a learner but never demotes a voter,
// and a member id is never given again (etcd draws a new one at every add); a member removed
// since stops serving when it applies its removal, so its `EtcdStatus` fails and no look reads
// it as a voter again (only in the moment before it applies it could a look read as voting a
// member a fresh list no longer holds). A member the last list did not hold as a voter (added
// since, re-added under a new id, or a learner then) has the list asked again, and that list
// replaces the cluster's: a learner is read as voting once a list says it was promoted.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "reconciler/clients/talos/talos_types.h"

namespace tr::reconciler {

class EtcdVoters {
 public:
  // Whether the last list read of `cluster` held `member_id` as a voter.
  bool Known(const std::string& cluster, uint64_t member_id) const;
  // `list`, just read of `cluster`, is its members now.
  void Replace(const std::string& cluster, const std::vector<talos::EtcdMember>& list);

 private:
  mutable Mutex mu_;
  std::unordered_map<std::string, std::vector<uint64_t>> voters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler
