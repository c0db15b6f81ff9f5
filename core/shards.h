// Sharding a fleet between reconciler replicas: which shard a cluster belongs to, the name of
// each shard's Lease, and a replica's fair share of the shards.
//
// A cluster's shard is the 32-bit FNV-1a hash of its name (the bytes of metadata.name, offset
// basis 2166136261, prime 16777619) modulo the number of shards. It depends on nothing but the
// name and the count, so every replica, every version and every restart agrees on it; changing
// `--shards` moves clusters between shards (the Leases of the new count decide who acts).
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tr::core {

// 32-bit FNV-1a of `text`.
uint32_t Fnv1a32(std::string_view text);

// The shard of `cluster` among `shards` (>= 1): Fnv1a32(cluster) % shards.
int ShardOf(std::string_view cluster, int shards);

// The Lease of `shard`: `base` itself when there is one shard (plain leader election),
// "<base>-shard-<shard>" otherwise.
std::string ShardLeaseName(std::string_view base, int shard, int shards);

// How many shards one of `replicas` replicas should hold: ceil(shards / replicas); all of them
// when `replicas` < 1.
int FairShare(int shards, int replicas);

}  // namespace tr::core
