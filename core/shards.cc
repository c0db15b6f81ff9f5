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

std::string ShardLeaseName(std::string_view base, int shard, int shards) {
  if (shards <= 1) return std::string(base);
  return fmt::format("{}-shard-{}", base, shard);
}

int FairShare(int shards, int replicas) {
  if (replicas < 1) return shards;
  return (shards + replicas - 1) / replicas;
}

}  // namespace tr::core
