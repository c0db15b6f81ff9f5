// The daemon's leader election (`run --leader-elect`, `--shards N`): the Lease endpoint, the
// shard elector on a thread of its own, the fences around the reconciler, and the ownership
// gauges for /metrics. Built from the daemon configuration; the daemon owns one per process.
//
// Thread-safety: Start and Stop from the daemon's thread; the rest from any thread.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "reconciler/clients/kube/lease_endpoint.h"
#include "reconciler/features/lease/leader_election_flags.h"
#include "reconciler/features/lease/shard_elector.h"

namespace tr::reconciler::lease {

class Election {
 public:
  // The Lease client and elector of `flags` (nullptr when --leader-elect is off), on the
  // Kubernetes API of `kubeconfig` (empty: the in-cluster service account). InvalidArgument
  // for unusable Kubernetes credentials.
  static absl::StatusOr<std::unique_ptr<Election>> Open(const LeaderElectionFlags& flags,
                                                        const std::filesystem::path& kubeconfig,
                                                        Env& env);
  ~Election() { Stop(); }
  Election(const Election&) = delete;
  Election& operator=(const Election&) = delete;

  ShardElector& elector() { return *elector_; }

  // Starts electing on a thread of its own; `on_acquired` is called there with each shard taken.
  void Start(std::function<void(int shard)> on_acquired);
  // Stops electing and gives back every shard held. Call once nothing acts any more.
  void Stop();

  // talos_reconciler_leader and talos_reconciler_shard_owned{shard="i"} in the Prometheus
  // text format.
  std::string RenderPrometheus(Env& env) const;

 private:
  Election(LeaseEndpoint endpoint, ShardElectorOptions options, Env& env);

  LeaseEndpoint endpoint_;
  std::unique_ptr<LeaseClient> leases_;
  std::unique_ptr<ShardElector> elector_;
  std::jthread thread_;
};

}  // namespace tr::reconciler::lease
