// Observation (docs/architecture.md): what a cluster's nodes really run, through the Talos API
// (version, boot id, machine stage and readiness, etcd membership, health and leadership) and
// the Kubernetes API (node Ready, cordoned, kubelet version, the pending-install mark of
// core/pending_mark.h).
//
// Thread-safe when the client factory is.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "base/mutex.h"
#include "core/observed.h"
#include "core/profile.h"
#include "reconciler/clients/cluster_clients.h"
#include "reconciler/clients/talos/extensions.h"
#include "reconciler/clients/talos/talos_types.h"
#include "reconciler/operations/etcd_voters.h"
#include "reconciler/operations/node_watches.h"

namespace tr::reconciler {

// What one reconcile pass has read of a cluster's etcd, for the pass's later looks
// (FleetObserver::ObserveEtcdReusing): each control plane's member fields, by node name, and the
// cluster's member list. It holds while nothing the pass did since can have changed etcd
// (core::ActionTraits::keeps_etcd). A member list read earlier errs only towards "not voting":
// etcd promotes a learner but never demotes a voter, and a member the list does not hold has
// the list asked again.
struct EtcdReadings {
  struct Member {
    bool healthy = false;
    bool member = false;
    bool leader = false;
  };
  std::map<std::string, Member> nodes;
  std::optional<std::vector<talos::EtcdMember>> members;
};
class FleetObserver {
 public:
  virtual ~FleetObserver() = default;
  // Every node of `profile`. A node that does not answer is reported unreachable, not as an
  // error. Errors: FailedPrecondition for unusable credentials (also when no node answers
  // because the talosconfig's ca or crt is another cluster's), PermissionDenied when the
  // credentials' role cannot read a node.
  virtual absl::StatusOr<core::ObservedCluster> Observe(const core::ClusterProfile& profile) = 0;
  // As Observe, but only the nodes named in `nodes` need be looked at (a node in flight);
  // the result holds at least those. The default observes every node.
  virtual absl::StatusOr<core::ObservedCluster> ObserveNodes(
      const core::ClusterProfile& profile, const std::vector<std::string>& nodes) {
    (void)nodes;
    return Observe(profile);
  }
  // As ObserveNodes, without asking etcd (as ObserveWithoutEtcd). The default asks it.
  virtual absl::StatusOr<core::ObservedCluster> ObserveNodesWithoutEtcd(
      const core::ClusterProfile& profile, const std::vector<std::string>& nodes) {
    return ObserveNodes(profile, nodes);
  }
  // As Observe, without asking etcd (ObservedCluster::etcd_observed false): for a look whose
  // decision will not read it (core::DecisionReadsEtcd). The default observes everything.
  virtual absl::StatusOr<core::ObservedCluster> ObserveWithoutEtcd(
      const core::ClusterProfile& profile) {
    return Observe(profile);
  }
  // Adds etcd to a look ObserveWithoutEtcd returned (every control plane that answered, their
  // statuses asked in one call: TalosClient::EtcdStatuses); nothing when it has it. Errors as
  // Observe's.
  virtual absl::Status ObserveEtcd(const core::ClusterProfile& profile,
                                   core::ObservedCluster& observed) {
    (void)profile;
    (void)observed;
    return absl::OkStatus();
  }
  // As ObserveEtcd, taking from `pass` the control planes it holds and the member list, and
  // adding to it what it asks. The default asks as ObserveEtcd.
  virtual absl::Status ObserveEtcdReusing(const core::ClusterProfile& profile,
                                          core::ObservedCluster& observed, EtcdReadings& pass) {
    (void)pass;
    return ObserveEtcd(profile, observed);
  }
};

class TalosFleetObserver final : public FleetObserver {
 public:
  // `self_node` is the name of the node this process runs on ("" when none). Every look asks
  // the nodes.
  TalosFleetObserver(ClusterClientFactory& clients, std::string self_node)
      : clients_(clients), self_node_(std::move(self_node)) {}
  // The same, and the nodes of a cluster looked at often are watched (node_watches.h): a
  // look then reads their stage, readiness and boot id from the watches, and a change of a
  // node's readiness calls `wake(cluster)` (on the Talos client's threads).
  TalosFleetObserver(ClusterClientFactory& clients, std::string self_node, Env& env,
                     NodeWatches::Wake wake,
                     std::chrono::milliseconds watch_idle = std::chrono::minutes(1))
      : clients_(clients),
        self_node_(std::move(self_node)),
        watches_(std::make_unique<NodeWatches>(env, std::move(wake), watch_idle)) {}
  absl::StatusOr<core::ObservedCluster> Observe(const core::ClusterProfile& profile) override;
  absl::StatusOr<core::ObservedCluster> ObserveNodes(
      const core::ClusterProfile& profile, const std::vector<std::string>& nodes) override;
  absl::StatusOr<core::ObservedCluster> ObserveNodesWithoutEtcd(
      const core::ClusterProfile& profile, const std::vector<std::string>& nodes) override;
  absl::StatusOr<core::ObservedCluster> ObserveWithoutEtcd(
      const core::ClusterProfile& profile) override;
  absl::Status ObserveEtcd(const core::ClusterProfile& profile,
                           core::ObservedCluster& observed) override;
  absl::Status ObserveEtcdReusing(const core::ClusterProfile& profile,
                                  core::ObservedCluster& observed, EtcdReadings& pass) override;
  // Ends the watches, and starts none after (looks ask): what `wake` calls may go away once
  // it returns.
  void StopWatching() {
    if (watches_) watches_->Stop();
  }
  // How many nodes' watches are live (0 without watching); for tests and benchmarks.
  int WatchedNodes() const { return watches_ ? watches_->Live() : 0; }

  // What cannot change within one boot of a node: its Talos version and the extensions of the
  // image it booted. Kept by cluster and node address with the boot id, so a node is asked
  // them again only after it rebooted.
  struct BootFacts {
    std::string boot_id;
    core::Version talos;
    std::optional<talos::NodeExtensions> extensions;  // unset until listed once
    // The `created` of a MachineStatus had no later than `boot_id` was read ("" when none): a
    // status with this `created` is that boot's, so its boot id need not be read again.
    std::string status_created;
  };

 private:
  absl::StatusOr<core::ObservedCluster> ObserveSome(const core::ClusterProfile& profile,
                                                    const std::vector<std::string>* nodes,
                                                    bool etcd);
  // Sets `refused` when the node is unreachable because every endpoint turned it down at once.
  // `watched`: the cluster's nodes are watched (NodeWatches::Looked); `in_flight`: the node is
  // being upgraded (a look that follows the nodes in flight).
  absl::Status ObserveTalos(const std::shared_ptr<talos::TalosClient>& talos,
                            const std::string& cluster, const core::NodeSpec& spec, bool watched,
                            bool in_flight, core::NodeObservation& node, bool& refused);
  // The node's boot id, from its watch when that knows it, or from the boot whose status
  // `status` is (BootFacts::status_created), else read; `key` is the node's in boots_
  // ("<cluster>/<address>"), `watch` is set when the node has a live watch.
  absl::StatusOr<std::string> BootId(talos::TalosClient& talos, const std::string& cluster,
                                     const std::string& address, const std::string& key,
                                     const talos::MachineStatus& status,
                                     std::optional<NodeWatches::Known>& watch);
  // The boot id kept for the node `key` ("<cluster>/<address>") whose status is `status`;
  // none when that status is not one a look had before it read the boot id.
  std::optional<std::string> KnownBootOf(const std::string& key,
                                         const talos::MachineStatus& status);
  // The node's schematic and extensions, listed once per boot.
  void ObserveExtensions(talos::TalosClient& talos, const std::string& key,
                         const core::NodeSpec& spec, core::NodeObservation& node);

  ClusterClientFactory& clients_;
  const std::string self_node_;
  Mutex mu_;
  // By "<cluster>/<address>"; hashed, as a look finds each of its nodes here two or three times.
  std::unordered_map<std::string, BootFacts> boots_ ABSL_GUARDED_BY(mu_);
  EtcdVoters voters_;  // by cluster: a member known as a voter is not looked up again
  const std::unique_ptr<NodeWatches> watches_;                   // null: every look asks
};

}  // namespace tr::reconciler
