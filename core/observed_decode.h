// The observed-state file of the offline `plan` command: what each cluster's nodes run,
// written by hand or by a script instead of observed live.
//
//   clusters:
//     prod-eu-1:
//       nodes:
//         cp-0: {talos: 1.11.6, kubelet: 1.34.1, ready: true, etcdLeader: true}
//         w-0:  {talos: 1.11.6, kubelet: 1.34.1, ready: true}
//       self: w-0          # optional: the node the reconciler runs on
//
// Node keys (all optional; defaults are NodeObservation's): talos (Talos version), kubelet
// (Kubernetes version), ready, reachable, schedulable, etcdLeader, etcdHealthy, etcdMember
// (default false), bootId, stage (unknown | booting | installing | maintenance | running |
// rebooting | shutting-down | resetting | upgrading), lastUpgradeDuration (a duration).
// Cluster names are DNS-1123 labels, node names DNS-1123 names; at most one etcd leader per
// cluster; `self` must name one of the cluster's nodes. Read with the same strict YAML reader
// as profiles, so the same refusals apply (strict_yaml.h).
//
// Pure; thread-compatible.
#pragma once

#include <string_view>
#include <vector>

#include "core/decoded.h"
#include "core/observed.h"

namespace tr::core {

struct ObservedFleet {
  std::vector<ObservedCluster> clusters;  // in file order

  // The cluster named `name`; nullptr when the file does not mention it.
  const ObservedCluster* FindCluster(std::string_view name) const;
};

// Decodes `content`, the bytes of the observed-state file at `path` (used in diagnostics).
// The result holds the fleet, or every problem found as file:line:column diagnostics.
Decoded<ObservedFleet> DecodeObservedFleet(std::string_view path, std::string_view content);

}  // namespace tr::core
