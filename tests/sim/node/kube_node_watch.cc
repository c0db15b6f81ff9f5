// The history a watch of Nodes reads (GET /api/v1/nodes?watch=1, kube_api.cc). A Node object
// here is computed from its machine (KubeNodeJsonLocked), so a change such as Ready going False
// when the machine goes down has no write of its own: settling finds it, gives the Node a new
// resourceVersion as the node lifecycle controller's status update would, and keeps the event,
// up to the watch cache's window (kNodeWatchHistory). Times (heartbeats, transitions, the cordon
// taint's timeAdded) are left out of the comparison: a real kubelet's heartbeat goes to its
// Lease, and its status only every nodeStatusReportFrequency (5 min) or on a change.
#include <algorithm>
#include <utility>

#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {
namespace {

using nlohmann::json;

json WithoutTimes(json node) {
  node["metadata"].erase("resourceVersion");
  for (auto& condition : node["status"]["conditions"]) {
    condition.erase("lastHeartbeatTime");
    condition.erase("lastTransitionTime");
  }
  if (node["spec"].contains("taints")) {
    for (auto& taint : node["spec"]["taints"]) taint.erase("timeAdded");
  }
  return node;
}

}  // namespace

SimCluster::KubeNodeInputs SimCluster::KubeNodeInputsOf(const SimNode& node) {
  return {.labels = node.kube_labels,
          .annotations = node.kube_annotations,
          .created = node.kube_created,
          .tag = node.tag,
          .kubelet_version = node.kubelet_version,
          .boot_id = node.boot_id,
          .address = node.address,
          .unschedulable = node.unschedulable,
          .kube_ready = node.kube_ready,
          .up = node.up};
}

void SimCluster::SettleKubeNodesLocked() {
  if (node_history_start_ == 0) node_history_start_ = resource_version_;
  std::vector<KubeNodeEvent> changes;
  for (auto& node : nodes_) {
    KubeNodeInputs inputs = KubeNodeInputsOf(*node);
    auto settled = node_settled_.find(node->spec.name);
    if (settled == node_settled_.end()) {
      // There from the start: a watch from a resourceVersion sees it only when it changes.
      node_settled_.emplace(node->spec.name,
                            SettledNode{node->kube_resource_version, std::move(inputs),
                                        KubeNodeJsonLocked(*node)});
      continue;
    }
    SettledNode& last = settled->second;
    if (last.inputs == inputs && last.resource_version == node->kube_resource_version) continue;
    json now = WithoutTimes(KubeNodeJsonLocked(*node));
    last.inputs = std::move(inputs);
    if (WithoutTimes(last.stored) == now &&
        last.resource_version == node->kube_resource_version) {
      continue;
    }
    // Changed by its machine alone: the update a controller would have written.
    if (last.resource_version == node->kube_resource_version) {
      node->kube_resource_version = NextResourceVersionLocked();
    }
    last.resource_version = node->kube_resource_version;
    json previous = std::exchange(last.stored, KubeNodeJsonLocked(*node));
    changes.push_back({last.resource_version, "MODIFIED", last.stored, std::move(previous)});
  }
  // A write's resourceVersion is older than one given here: the history stays in order.
  std::sort(changes.begin(), changes.end(),
            [](const auto& a, const auto& b) { return a.resource_version < b.resource_version; });
  for (KubeNodeEvent& change : changes) node_events_.push_back(std::move(change));
  // As the watch cache: a watch may start one before the oldest event kept (cacher's
  // watch_cache.go, `resourceVersion < oldest-1` is 410 Expired).
  while (node_events_.size() > kNodeWatchHistory) {
    node_events_.pop_front();
    node_history_start_ = node_events_.front().resource_version - 1;
  }
}

std::optional<std::vector<SimCluster::KubeNodeEvent>> SimCluster::KubeNodeEventsAfterLocked(
    uint64_t resource_version) const {
  if (resource_version < node_history_start_) return std::nullopt;
  std::vector<KubeNodeEvent> events;
  for (const KubeNodeEvent& event : node_events_) {
    if (event.resource_version > resource_version) events.push_back(event);
  }
  return events;
}

}  // namespace tr::sim
