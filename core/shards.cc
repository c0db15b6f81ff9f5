#include "core/shards.h"

#include "fmt/format.h"

namespace tr::core {

uint32_t Fnv1a32(std::string_view text) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

int ShardOf(std::string_view cluster, int shards) {
  if (shards <= 1) return 0;
  return static_cast<int>(Fnv1a32(cluster) % static_cast<uint32_t>(shards));
}

int ShardOf(std::string_view cluster, std::optional<int> pinned, int shards) {
  if (pinned && *pinned >= 0 && *pinned < shards) return *pinned;
  return ShardOf(cluster, shards);
}

std::string ShardLeaseName(std::string_view base, int shard, int shards) {
  if (shards <= 1) return std::string(base);
  return fmt::format("{}-shard-{}", base, shard);
}

int FairShare(int shards, int replicas) {
  if (replicas < 1) return shards;
  return (shards + replicas - 1) / replicas;
}

std::string MemberLeaseName(std::string_view base, std::string_view identity) {
  return fmt::format("{}-member-{}", base, identity);
}

std::set<std::string> LiveMembers(const std::vector<Member>& members, std::string_view self,
                                  std::chrono::system_clock::time_point now,
                                  const MemberLiveness& liveness) {
  std::set<std::string> live = {std::string(self)};
  for (const Member& m : members) {
    if (!m.identity.empty() && m.renewed + m.duration + liveness.skew_margin > now &&
        m.unchanged_for < liveness.stalled_after) {
      live.insert(m.identity);
    }
  }
  return live;
}

ShareStep NextShareStep(const ShardCensus& census, std::string_view self) {
  const auto mine_it = census.held.find(std::string(self));
  const int mine = mine_it == census.held.end() ? 0 : mine_it->second;
  const int replicas = static_cast<int>(census.held.size() + (mine_it == census.held.end()));
  const int floor = census.shards / replicas;
  const int ceil = FairShare(census.shards, replicas);
  bool starving = false;  // another live replica below floor
  std::string richest;    // most shards; the smallest identity among equals
  int most = -1;
  for (const auto& [identity, count] : census.held) {  // ascending identities
    if (identity != self && count < floor) starving = true;
    if (count > most) most = count, richest = identity;
  }
  ShareStep step;
  step.take = (census.free > 0 && mine < (starving ? floor : ceil)) ||
              (census.stale_free > 0 && mine < ceil);
  step.give_back =
      mine > ceil || (starving && census.free == 0 && mine > floor && richest == self);
  return step;
}

}  // namespace tr::core
