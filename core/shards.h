// Sharding a fleet between reconciler replicas: which shard a cluster belongs to, the name of
// each shard's Lease, and a replica's fair share of the shards.
//
// A cluster's shard is the 32-bit FNV-1a hash of its name (the bytes of metadata.name, offset
// basis 2166136261, prime 16777619) modulo the number of shards. It depends on nothing but the
// name and the count, so every replica, every version and every restart agrees on it; changing
// `--shards` moves clusters between shards (the Leases of the new count decide who acts). A
// profile may pin its cluster to a shard instead (spec.shard), e.g. to keep two clusters apart.
//
// Presence: every replica also renews a membership Lease of its own, so a replica that holds no
// shard yet (one started after the others took them all) is counted. The shares follow from
// the live members: with N shards and M replicas each holds floor(N/M) or ceil(N/M). A replica
// beyond ceil gives one shard back per round; when a live replica holds fewer than floor(N/M)
// and no shard is free, the replica holding most (the smallest identity among equals) gives one
// back; a replica takes free shards up to floor(N/M) while another replica is below that, up to
// ceil(N/M) otherwise — so a late replica gets the shards given back, not a peer. A member
// that stopped renewing (killed: its Lease still runs) is not live, so nothing is given back
// for it.
//
// Pure; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tr::core {

// 32-bit FNV-1a of `text`.
uint32_t Fnv1a32(std::string_view text);

// The shard of `cluster` among `shards` (>= 1): Fnv1a32(cluster) % shards.
int ShardOf(std::string_view cluster, int shards);
// The shard of a cluster whose profile may pin it (spec.shard): `pinned` when it is one of the
// shards, else ShardOf(cluster, shards).
int ShardOf(std::string_view cluster, std::optional<int> pinned, int shards);

// The Lease of `shard`: `base` itself when there is one shard (plain leader election),
// "<base>-shard-<shard>" otherwise.
std::string ShardLeaseName(std::string_view base, int shard, int shards);

// How many shards one of `replicas` replicas should hold: ceil(shards / replicas); all of them
// when `replicas` < 1.
int FairShare(int shards, int replicas);

// The membership Lease of `identity`: "<base>-member-<identity>".
std::string MemberLeaseName(std::string_view base, std::string_view identity);

// A membership Lease as read: its holder (empty once the replica left), when it was last
// renewed (on the writer's clock) and for how long it counts.
struct Member {
  std::string identity;
  std::chrono::system_clock::time_point renewed;
  std::chrono::seconds duration{0};
  // How long its renewTime has stayed the same, on the reader's own clock since it saw that
  // renewTime first (zero at the first read).
  std::chrono::milliseconds unchanged_for{0};
};

// When a member counts as live.
struct MemberLiveness {
  // Added to a Lease's duration for the clock difference between writer and reader.
  std::chrono::milliseconds skew_margin{0};
  // A member whose renewTime has not changed for this long has stopped renewing (killed,
  // frozen) though its Lease has not run out yet: a live one renews every retry period.
  std::chrono::milliseconds stalled_after{0};
};

// The identities of the members live at `now`: with a holder, renewed + duration + skew_margin
// > now, and still renewing (unchanged_for < stalled_after). `self` is always live. A replica
// that stopped renewing but still holds a live shard Lease is counted by the census as that
// shard's holder, so this only leaves out replicas that hold nothing: none of them is handed a
// shard it would never take.
std::set<std::string> LiveMembers(const std::vector<Member>& members, std::string_view self,
                                  std::chrono::system_clock::time_point now,
                                  const MemberLiveness& liveness);

// Who holds how many shards, as one replica sees it.
struct ShardCensus {
  int shards = 1;
  std::map<std::string, int> held;  // every live replica (self included) -> shards it holds
  int free = 0;                     // shards no live replica holds
  // Of those, the ones free for a lease duration already: the replica they were left for did
  // not take them, so any replica below ceil(S/R) may.
  int stale_free = 0;
};

// What the replica `self` does this round (see the top of this file).
struct ShareStep {
  bool take = false;       // take one free shard
  bool give_back = false;  // give back its highest-numbered shard
};
ShareStep NextShareStep(const ShardCensus& census, std::string_view self);

}  // namespace tr::core
