// Where the simulated controllers and scheduler put a pod: the replacement a ReplicaSet,
// StatefulSet or DaemonSet makes for a removed pod, and the node kube-scheduler's filters leave
// for it (NodeUnschedulable, the not-ready taint, NodeAffinity for spec.nodeSelector,
// VolumeBinding for a claim bound to a local PersistentVolume, PodTopologySpread with
// DoNotSchedule, InterPodAffinity for required anti-affinity). A pod no node can take stays
// Pending and is bound when a node becomes eligible.
#include <algorithm>
#include <map>

#include "fmt/format.h"
#include "tests/sim/common/ids.h"
#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {
namespace {

bool HasLabels(const std::map<std::string, std::string>& labels, const KubeLabels& wanted) {
  for (const auto& [k, v] : wanted) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

// The Node's labels as served (kubernetes.io/hostname, then the fleet file's and patched ones).
std::map<std::string, std::string> NodeLabels(const SimNode& node) {
  std::map<std::string, std::string> labels = {{"kubernetes.io/hostname", node.spec.name},
                                               {"kubernetes.io/os", "linux"}};
  for (const auto& [k, v] : node.kube_labels) labels[k] = v;
  return labels;
}

}  // namespace

std::string SimCluster::UnfitReasonLocked(const KubePod& pod, const SimNode& node) const {
  const PodSpec& spec = *pod.fleet;
  if (node.unschedulable) return "node(s) were unschedulable";
  if (!node.kube_ready) {
    return node.up ? "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"
                   : "node(s) had untolerated taint {node.kubernetes.io/unreachable: }";
  }
  if (!HasLabels(NodeLabels(node), spec.node_selector)) {
    return "node(s) didn't match Pod's node affinity/selector";
  }
  for (const auto& volume : spec.volumes) {
    for (const auto& pv : spec_.persistent_volumes) {
      if (!volume.claim.empty() && pv.claim_namespace == pod.ns && pv.claim_name == volume.claim &&
          !pv.node.empty() && pv.node != node.spec.name) {
        return "node(s) had volume node affinity conflict";
      }
    }
  }
  if (spec.spread) {
    // Domains: every node the pod's nodeSelector admits, tainted (cordoned, NotReady) or not:
    // the defaults nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore.
    std::map<std::string, int> matching;
    for (const auto& n : nodes_) {
      if (HasLabels(NodeLabels(*n), spec.node_selector)) matching[n->spec.name] = 0;
    }
    for (const auto& other : pods_) {
      auto domain = matching.find(other.node);
      if (domain != matching.end() && other.ns == pod.ns &&
          HasLabels(other.labels, spec.spread->labels)) {
        ++domain->second;
      }
    }
    int least = INT32_MAX;
    for (const auto& [name, count] : matching) least = std::min(least, count);
    const int self = HasLabels(pod.labels, spec.spread->labels) ? 1 : 0;
    if (matching[node.spec.name] + self - least > spec.spread->max_skew) {
      return "node(s) didn't match pod topology spread constraints";
    }
  }
  for (const auto& other : pods_) {
    if (other.node != node.spec.name || other.ns != pod.ns) continue;
    if (!spec.anti_affinity.empty() && HasLabels(other.labels, spec.anti_affinity)) {
      return "node(s) didn't match pod anti-affinity rules";
    }
    if (other.fleet != nullptr && !other.fleet->anti_affinity.empty() &&
        HasLabels(pod.labels, other.fleet->anti_affinity)) {
      return "node(s) didn't satisfy existing pods anti-affinity rules";
    }
  }
  return "";
}

std::string SimCluster::UnschedulableMessageLocked(const KubePod& pod) const {
  std::map<std::string, int> reasons;
  for (const auto& node : nodes_) {
    std::string why = UnfitReasonLocked(pod, *node);
    if (why.empty() && node->spec.name == pod.avoid_node) why = "node(s) were unschedulable";
    if (!why.empty()) ++reasons[why];
  }
  std::string message = fmt::format("0/{} nodes are available: ", nodes_.size());
  bool first = true;
  for (const auto& [why, count] : reasons) {
    message += fmt::format("{}{} {}", first ? "" : ", ", count, why);
    first = false;
  }
  return message + ".";
}

void SimCluster::PodStartsLocked(const std::string& uid) {
  scheduler_->After(Scaled(timings_.pod_start), [this, uid] {
    std::lock_guard inner(mu_);
    for (auto& p : pods_) {
      if (p.uid != uid || p.node.empty()) continue;
      p.ready = true;
      p.resource_version = NextResourceVersionLocked();
      if (SimNode* on = FindNodeLocked(p.node)) JournalStateLocked(*on, "pod-ready", p.ns + "/" + p.name);
    }
    NotifyLocked();
  });
}

void SimCluster::SchedulePendingLocked() {
  for (auto& pod : pods_) {
    if (pod.fleet == nullptr || !pod.node.empty()) continue;
    const SimNode* target = nullptr;
    size_t best = SIZE_MAX;
    for (const auto& n : nodes_) {
      if (n->spec.name == pod.avoid_node || !UnfitReasonLocked(pod, *n).empty()) continue;
      const size_t load = static_cast<size_t>(std::count_if(
          pods_.begin(), pods_.end(), [&](const KubePod& p) { return p.node == n->spec.name; }));
      if (load < best) {
        best = load;
        target = n.get();
      }
    }
    if (target == nullptr) continue;
    pod.node = target->spec.name;
    pod.avoid_node.clear();
    pod.resource_version = NextResourceVersionLocked();
    JournalStateLocked(*FindNodeLocked(pod.node), "schedule", pod.ns + "/" + pod.name);
    PodStartsLocked(pod.uid);
  }
}

void SimCluster::RescheduleLocked(KubePod pod) {
  // Only the fleet file's pods and kube-proxy have a controller that makes a new one.
  if (pod.owner_kind.empty() || pod.owner_kind == "Node") return;
  if (pod.fleet == nullptr && pod.owner_kind != "DaemonSet") return;
  if (pod.owner_kind != "StatefulSet") {
    std::string base = pod.name;
    if (auto dash = base.rfind('-'); dash != std::string::npos && base.size() - dash == 6) {
      base.resize(dash);
    }
    pod.name = fmt::format("{}-{}", base, NewUuid().substr(0, 5));
  }
  pod.uid = NewUuid();
  pod.ready = false;
  pod.created = scheduler_->WallNow();
  pod.resource_version = NextResourceVersionLocked();
  if (pod.owner_kind == "DaemonSet") {
    // The DaemonSet controller binds its pod to the node itself (it tolerates the
    // unschedulable and not-ready taints).
    PodStartsLocked(pod.uid);
    pods_.push_back(std::move(pod));
    return;
  }
  pod.avoid_node = pod.node;
  pod.node.clear();
  pods_.push_back(std::move(pod));
  SchedulePendingLocked();
}

}  // namespace tr::sim
