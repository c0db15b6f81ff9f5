// Leader election and sharding on Kubernetes Leases, with the timings of controller-runtime
// (lease 15 s, renew deadline 10 s, retry 2 s by default).
//
// The fleet is split into `shards` shards (core/shards.h), each with its own Lease
// (`<name>` for one shard — plain leader election — else `<name>-shard-<i>`). Every retry
// period a replica reads every shard's Lease and
//   - renews the ones it holds, up to its fair share ceil(shards / replicas), where the
//     replicas are the holders of the live Leases plus itself, and gives back the rest;
//   - takes one shard that is free (no Lease, or released) or expired, while it holds fewer
//     than its share. A Lease is expired when its record has not changed for its
//     leaseDurationSeconds as measured on this replica's own clock since it first saw that
//     record (as client-go does), so clock differences between replicas do not matter.
// Writes are conditional on the resourceVersion read, so of two replicas taking a shard at
// once exactly one succeeds.
//
// Fencing: this replica acts for a shard only while Holding() says so: until the start of its
// last successful write to the Lease plus the renew deadline. Another replica can take the
// shard only a full lease duration after it saw that write, so the difference (5 s by
// default) is the margin for clock rate skew and for an action already under way.
//
// A shard is given back only while no node operation of this replica is under way on it (the
// fenced executor marks each call with BeginActing/EndActing) and none of its clusters has a
// node operation in flight as recorded (OperationsInFlight: between two calls of one node
// upgrade); a give-back waits for a round without either. On shutdown the shards are given
// back regardless: the operation in flight is on the status branch, and the next holder
// adopts it (fencing.h).
//
// Members: a replica whose membership Lease's renewTime has not changed for two retry periods
// on our clock (StalledAfter) has stopped renewing — killed, frozen — and no longer counts,
// though its Lease is not over yet; so no shard is given back for it to take.
//
// Thread-safety: Run (or Tick) on one thread; Holding, Held and Term from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/mutex.h"
#include "core/shards.h"
#include "reconciler/features/lease/lease_client.h"

namespace tr::reconciler::lease {

struct ElectionTimings {
  std::chrono::milliseconds lease_duration{15'000};  // written as whole seconds (rounded up)
  std::chrono::milliseconds renew_deadline{10'000};  // how long a holder acts after a renew
  std::chrono::milliseconds retry_period{2'000};     // between two rounds
};

// InvalidArgument unless lease_duration > renew_deadline > retry_period > 0 (as client-go
// requires).
absl::Status ValidateTimings(const ElectionTimings& timings);

struct ShardElectorOptions {
  std::string lease_name = "talos-reconciler";
  std::string identity;  // this replica's holderIdentity (the pod name)
  int shards = 1;
  ElectionTimings timings;
};

// Which clusters this replica may act on now, and under which term (a number that changes each
// time the replica newly takes the shard, so the caller knows to re-read what another replica
// may have written meanwhile).
class ClusterOwnership {
 public:
  virtual ~ClusterOwnership() = default;
  virtual std::optional<uint64_t> Term(const std::string& cluster) = 0;
  // Marks an action on `cluster` under way until EndActing, when the cluster is held (false
  // otherwise: do not act). While one is under way, the shard is not given back voluntarily.
  virtual bool BeginActing(const std::string& cluster) { return Term(cluster).has_value(); }
  virtual void EndActing(const std::string& /*cluster*/) {}
};

class ShardElector final : public ClusterOwnership {
 public:
  // `leases` and `env` are not owned and outlive this.
  ShardElector(LeaseClient& leases, ShardElectorOptions options, Env& env);

  // The shard a profile pins its cluster to (spec.shard), nullopt when it does not; the hash of
  // the name decides then. Set before Run; called from any thread.
  void PinnedShards(std::function<std::optional<int>(const std::string& cluster)> pinned) {
    pinned_ = std::move(pinned);
  }
  // True while a cluster of `shard` has a node operation in flight as its status records it
  // (begun, not yet completed: for minutes, across several node calls). Such a shard is not
  // given back voluntarily: the give-back waits for a round with none. Set before Run; called
  // on the elector's thread.
  void OperationsInFlight(std::function<bool(int shard)> in_flight) {
    in_flight_ = std::move(in_flight);
  }
  // The shard of `cluster`: its pin, else the hash of its name (core::ShardOf).
  int ShardOfCluster(const std::string& cluster) const;

  // Called (on the elector's thread) with a shard this replica has just taken.
  void OnAcquired(std::function<void(int shard)> callback) { on_acquired_ = std::move(callback); }

  // One round (see above).
  void Tick();
  // Rounds every retry period (spread by ±10%) until `stop`; then gives back every shard held.
  void Run(std::stop_token stop);
  // Gives back every shard this replica holds (holder cleared); it stops acting first.
  void ReleaseAll();

  // The term of `shard` while this replica holds it at `now`; nullopt otherwise.
  std::optional<uint64_t> Holding(int shard, TimePoint now) const;
  // The shards held at `now`, ascending.
  std::vector<int> Held(TimePoint now) const;
  // ClusterOwnership: Holding(ShardOf(cluster)) at the env's now.
  std::optional<uint64_t> Term(const std::string& cluster) override;
  bool BeginActing(const std::string& cluster) override;
  void EndActing(const std::string& cluster) override;
  // The replicas counted in the last round (live members and holders, this one included).
  int Replicas() const;

  int shards() const { return options_.shards; }
  const ShardElectorOptions& options() const { return options_; }

 private:
  struct Shard {
    std::optional<LeaseRecord> observed;  // as last read; nullopt: no Lease
    TimePoint observed_at{};              // when `observed` last changed, on our clock
    TimePoint held_until{};               // fencing deadline; in the past: not held
    uint64_t term = 0;
    int acting = 0;  // node operations under way (BeginActing .. EndActing)
  };

  // A membership Lease's renewTime as last read, and when it was first read so (our clock).
  struct MemberSighting {
    std::optional<TimePoint> renewed;
    TimePoint since{};
  };

  std::string LeaseName(int shard) const;
  void Heartbeat();
  // The membership Leases, each with how long its renewTime has stood still on our clock.
  std::vector<core::Member> Members();
  // How long a member's renewTime may stand still before it counts as stopped (core::Member).
  std::chrono::milliseconds StalledAfter() const;
  void Observe(int shard, TimePoint now);
  bool Free(int shard, TimePoint now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  core::ShardCensus Census(const std::vector<core::Member>& members, TimePoint now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Renew(int shard);
  bool Acquire(int shard);
  // Gives `shard` back; when `voluntary`, not while an action is under way on it (false).
  bool Release(int shard, bool voluntary);
  // Stores the outcome of a write to `shard` made at `sent`.
  void Wrote(int shard, const absl::StatusOr<LeaseRecord>& written, TimePoint sent,
             const char* what);

  LeaseClient& leases_;
  const ShardElectorOptions options_;
  Env& env_;
  const int count_;  // shards_.size(), fixed
  std::function<void(int)> on_acquired_;
  std::function<std::optional<int>(const std::string&)> pinned_;
  std::function<bool(int)> in_flight_;
  mutable Mutex mu_;
  std::vector<Shard> shards_ ABSL_GUARDED_BY(mu_);
  int replicas_ ABSL_GUARDED_BY(mu_) = 1;
  // The shard each action under way counted against (a pin may change meanwhile).
  std::multimap<std::string, int> acting_ ABSL_GUARDED_BY(mu_);
  std::optional<LeaseRecord> member_;  // this replica's membership Lease (elector thread only)
  std::map<std::string, MemberSighting> sightings_;  // by membership Lease (elector thread only)
};

}  // namespace tr::reconciler::lease
