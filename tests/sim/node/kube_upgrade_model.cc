// How the Kubernetes components of a simulated node follow a machine configuration change, as on
// Talos: a new kubelet image restarts the kubelet service (its resource is destroyed, then the
// service comes back running with the new version, which the Node then reports); a new static pod
// image re-renders the static pod, whose mirror pod carries the `talos.dev/config-version` of the
// component's config resource and becomes Ready once the new container started. The Kubernetes
// upgrade faults (image_pull_failure, static_pod_not_ready, kubelet_not_returning) act here.
#include <algorithm>

#include "fmt/format.h"
#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {
namespace {

std::string TagOf(const std::string& image) {
  auto colon = image.rfind(':');
  return colon == std::string::npos ? "" : image.substr(colon + 1);
}

// The COSI resource whose version a control-plane static pod's annotation carries.
std::string ConfigResourceKey(const std::string& component) {
  if (component == "kube-apiserver") {
    return "controlplane/APIServerConfigs.kubernetes.talos.dev/kube-apiserver";
  }
  if (component == "kube-controller-manager") {
    return "controlplane/ControllerManagerConfigs.kubernetes.talos.dev/kube-controller-manager";
  }
  return "controlplane/SchedulerConfigs.kubernetes.talos.dev/kube-scheduler";
}

bool FaultMatches(const SimNode& node, FaultKind kind, const std::string& text) {
  return std::any_of(node.faults.begin(), node.faults.end(), [&](const Fault& f) {
    return f.kind == kind && f.count != 0 &&
           (f.image.empty() || text.find(f.image) != std::string::npos);
  });
}

}  // namespace

bool SimCluster::AnyNodeHasFaultLocked(FaultKind kind) const {
  return std::any_of(nodes_.begin(), nodes_.end(),
                     [&](const auto& n) { return n->HasFault(kind); });
}

void SimCluster::RestartKubeletLocked(SimNode& node, const std::string& image) {
  node.services.erase("kubelet");
  RefreshResourcesLocked(node);
  AfterLocked(node, Scaled(timings_.pod_start), [this, image](SimNode& n) {
    if (n.HasFault(FaultKind::kKubeletNotReturning) ||
        FaultMatches(n, FaultKind::kImagePullFailure, image)) {
      SetServiceLocked(n, "kubelet", "Failed", false);
      n.kube_ready = false;
      n.kube_resource_version = NextResourceVersionLocked();
      JournalStateLocked(n, "fault", "kubelet_not_returning: kubelet did not come back");
      RefreshResourcesLocked(n);
      return;
    }
    SetServiceLocked(n, "kubelet", "Running", true);
    const std::string tag = TagOf(image);
    if (!tag.empty()) n.kubelet_version = tag.substr(tag[0] == 'v' ? 1 : 0);
    n.kube_resource_version = NextResourceVersionLocked();
    JournalStateLocked(n, "kubelet", "restarted " + n.kubelet_version);
    RefreshResourcesLocked(n);
  });
}

void SimCluster::RestartStaticPodsLocked(SimNode& node) {
  RefreshResourcesLocked(node);  // the component config resources get their new versions
  for (auto& pod : pods_) {
    if (pod.node != node.spec.name || pod.owner_kind != "Node") continue;
    auto image = node.images.find(pod.container);
    if (image == node.images.end() || image->second == pod.image) continue;
    auto config = node.resources.find(ConfigResourceKey(pod.container));
    const uint64_t version = config == node.resources.end() ? 0 : config->second.version;
    pod.image = image->second;
    pod.ready = false;
    pod.annotations["talos.dev/config-version"] = std::to_string(version);
    pod.resource_version = NextResourceVersionLocked();
    JournalStateLocked(node, "static pod", fmt::format("{} restarting {}", pod.name, pod.image));
    if (FaultMatches(node, FaultKind::kStaticPodNotReady, pod.container) ||
        FaultMatches(node, FaultKind::kImagePullFailure, pod.image)) {
      JournalStateLocked(node, "fault", pod.name + " never becomes Ready");
      continue;
    }
    AfterLocked(node, Scaled(timings_.pod_start),
                [this, key = pod.ns + "/" + pod.name, want = pod.image](SimNode& n) {
                  for (auto& p : pods_) {
                    if (p.ns + "/" + p.name != key || p.image != want) continue;
                    p.ready = true;
                    p.resource_version = NextResourceVersionLocked();
                    JournalStateLocked(n, "static pod",
                                       fmt::format("{} ready {}", p.name, p.image));
                  }
                });
  }
}

std::string SimCluster::BootstrapWorkloadImageLocked(const std::string& key) const {
  if (auto it = bootstrap_images_.find(key); it != bootstrap_images_.end()) return it->second;
  if (key == "deployments/coredns") return kDefaultCoreDnsImage;
  // Until an apply, the DaemonSet is as bootstrap created it: what its pods run.
  for (const auto& pod : pods_) {
    if (pod.container == "kube-proxy") return pod.image;
  }
  return "";
}

void SimCluster::SetBootstrapWorkloadImageLocked(const std::string& key, const std::string& image) {
  if (BootstrapWorkloadImageLocked(key) == image) return;
  bootstrap_images_[key] = image;
  SimNode& first = *nodes_.front();
  JournalStateLocked(first, "manifest", fmt::format("{} image = {}", key, image));
  if (key != "daemonsets/kube-proxy") return;
  for (auto& pod : pods_) {
    if (pod.container != "kube-proxy") continue;
    pod.image = image;
    pod.ready = false;
    pod.resource_version = NextResourceVersionLocked();
    // A node that cannot pull the new image keeps its pod in ImagePullBackOff: never Ready.
    if (const SimNode* on = FindNodeLocked(pod.node);
        on != nullptr && FaultMatches(*on, FaultKind::kImagePullFailure, image)) {
      JournalStateLocked(*on, "fault", pod.name + " never becomes Ready");
      continue;
    }
    AfterLocked(first, Scaled(timings_.pod_start),
                [this, key = pod.ns + "/" + pod.name, image](SimNode&) {
                  for (auto& p : pods_) {
                    if (p.ns + "/" + p.name != key || p.image != image) continue;
                    p.ready = true;
                    p.resource_version = NextResourceVersionLocked();
                  }
                });
  }
}

}  // namespace tr::sim
