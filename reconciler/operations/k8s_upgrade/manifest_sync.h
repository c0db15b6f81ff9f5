// ManifestSync: the bootstrap manifests applied to Kubernetes the way `talosctl upgrade-k8s`
// does on Talos 1.13+ (talos v1.14.0-rc.1 pkg/cluster/kubernetes/talos_managed.go
// syncManifestsSSA, go-kubernetes v0.2.41 kubernetes/ssa), so that talosctl and machined find
// their own objects afterwards:
//   1. read the inventory ConfigMap kube-system/talos-bootstrap-manifests-inventory (created
//      empty when missing);
//   2. read every object; one that names another inventory stops the sync before anything is
//      applied (talosctl's default policy AdoptIfNoInventory); then server-side apply each in
//      stage order (manifest_objects.h) as field manager `talos`, forced, carrying the inventory
//      annotation; an object already as written, with that annotation and a `talos` apply in
//      its managedFields, is left alone;
//   3. write the inventory: what it listed plus every object of the manifests;
//   4. unless pruning is off: delete (propagation Background) each object the inventory lists
//      that left the manifests, refusing one that names another inventory; write the inventory
//      without them;
//   5. wait until every DaemonSet and Deployment this run changed has rolled out.
// Any failure stops there: nothing is pruned after a failed apply.
//
// Thread-compatible: one Run at a time.
#pragma once

#include <chrono>
#include <functional>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/env.h"
#include "reconciler/clients/kube/kube_client.h"
#include "reconciler/operations/k8s_upgrade/manifest_objects.h"

namespace tr::reconciler::k8s_upgrade {

struct ManifestSyncOptions {
  bool prune = true;  // false: as `talosctl upgrade-k8s --manifests-no-prune`
  std::chrono::milliseconds poll_interval{1000};
  // The rollout wait (talosctl --manifests-reconcile-timeout, 5m by default).
  std::chrono::milliseconds rollout_timeout{std::chrono::minutes(5)};
  // Asked before each change (creating the inventory, an apply, a delete); a non-OK answer
  // stops the sync with it.
  std::function<absl::Status()> before_change;
  // One progress line.
  std::function<void(int done, int total, const std::string& line)> report;
};

struct ManifestSyncResult {
  // OK; FailedPrecondition for an object of another inventory (stalled until someone looks);
  // Aborted for a rollout that did not finish in time, naming it; Cancelled when stopped or
  // fenced; the API's code otherwise.
  absl::Status status;
  int applied = 0;
  int pruned = 0;
};

class ManifestSync {
 public:
  ManifestSync(kube::KubeClient& kube, Env& env, ManifestSyncOptions options)
      : kube_(kube), env_(env), options_(std::move(options)) {}

  ManifestSyncResult Run(std::stop_token stop, const std::vector<ManifestObject>& objects);

 private:
  // The inventory's keys; creates it empty when it is missing.
  absl::StatusOr<std::set<std::string>> ReadInventory();
  absl::Status WriteInventory(const std::set<std::string>& keys);
  // The live objects (null: not found); FailedPrecondition for one of another inventory.
  absl::StatusOr<std::vector<nlohmann::json>> ReadLive(const std::vector<ManifestObject>& objects);
  // Applies `object` unless `live` is already as Talos applies it; true when it was applied.
  absl::StatusOr<bool> Apply(const ManifestObject& object, const nlohmann::json& live);
  struct Pruned {
    absl::Status status;
    std::set<std::string> inventory;  // what is left listed (even after a failure)
    int deleted = 0;
  };
  Pruned Prune(std::stop_token stop, const std::vector<ManifestObject>& objects,
               std::set<std::string> inventory);
  // Deletes the object of `key` unless it is gone; true when it was deleted.
  absl::StatusOr<bool> PruneOne(const std::string& key, const std::vector<ManifestObject>& objects);
  absl::Status WaitRolledOut(std::stop_token stop,
                             const std::vector<const ManifestObject*>& changed);

  // options_.before_change's answer (OK when unset): asked before each change.
  absl::Status Fence();
  void Report(int done, int total, const std::string& line);

  kube::KubeClient& kube_;
  Env& env_;
  ManifestSyncOptions options_;
  std::string resource_version_;  // the inventory's, for the next write
};

}  // namespace tr::reconciler::k8s_upgrade
