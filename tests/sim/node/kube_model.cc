// The Kubernetes objects of a simulated cluster: Nodes that follow the machines (Ready,
// unschedulable, kubelet version), kube-system static pods and kube-proxy, workload pods from the
// fleet file, PodDisruptionBudgets, and evictions that honour them (policy/v1 semantics).
#include <algorithm>

#include "core/version.h"
#include "fmt/chrono.h"
#include "fmt/format.h"
#include "tests/sim/common/ids.h"
#include "tests/sim/node/kube_objects.h"
#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {
namespace {

using nlohmann::json;

std::string Timestamp(WallTime t) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z",
                     std::chrono::time_point_cast<std::chrono::seconds>(t));
}

std::string Suffix() { return NewUuid().substr(0, 5); }

}  // namespace

void SimCluster::InitKubeLocked() {
  const WallTime created = scheduler_->WallNow() - std::chrono::hours(24 * 30);
  auto add = [&](KubePod pod) {
    pod.uid = NewUuid();
    pod.created = created;
    pod.resource_version = NextResourceVersionLocked();
    pods_.push_back(std::move(pod));
  };
  for (const auto& node : nodes_) {
    if (node->is_control_plane()) {
      for (const char* c : {"kube-apiserver", "kube-controller-manager", "kube-scheduler"}) {
        KubePod pod;
        pod.ns = "kube-system";
        pod.name = fmt::format("{}-{}", c, node->spec.name);
        pod.node = node->spec.name;
        pod.labels = {{"k8s-app", c}, {"tier", "control-plane"}};
        pod.annotations = {{"talos.dev/config-version", std::to_string(node->config_version)},
                           {"kubernetes.io/config.mirror", NewUuid().substr(0, 8)}};
        pod.owner_kind = "Node";
        pod.container = c;
        pod.image = node->images[c];
        add(std::move(pod));
      }
    }
    KubePod proxy;
    proxy.ns = "kube-system";
    proxy.name = "kube-proxy-" + Suffix();
    proxy.node = node->spec.name;
    proxy.labels = {{"k8s-app", "kube-proxy"}, {"tier", "node"}};
    proxy.owner_kind = "DaemonSet";
    proxy.container = "kube-proxy";
    proxy.image = node->images["kube-proxy"];
    add(std::move(proxy));
  }
  for (const auto& spec : spec_.pods) {
    KubePod pod;
    pod.ns = spec.namespace_name;
    pod.name = spec.name;
    pod.node = spec.node;
    pod.labels.insert(spec.labels.begin(), spec.labels.end());
    pod.owner_kind = spec.owner == PodOwner::kNone ? "" : std::string(PodOwnerName(spec.owner));
    pod.owner_name = spec.owner_name;
    if (spec.owner == PodOwner::kStatefulSet) {
      pod.labels["statefulset.kubernetes.io/pod-name"] = spec.name;
    }
    pod.fleet = &spec;
    pod.container = "app";
    pod.image = "registry.example/app:1.0";
    add(std::move(pod));
  }
}

std::string SimCluster::KubeApiVersionLocked() const {
  std::optional<core::Version> lowest;
  for (const auto& node : nodes_) {
    auto it = node->images.find("kube-apiserver");
    if (it == node->images.end()) continue;
    auto v = core::ParseKubernetesVersion(it->second.substr(it->second.rfind(':') + 1));
    if (v.ok() && (!lowest || *v < *lowest)) lowest = *v;
  }
  return lowest ? "v" + lowest->ToString() : "v" + nodes_.front()->kubelet_version;
}

json SimCluster::KubeNodeJsonLocked(const SimNode& node) const {
  json labels = {{"kubernetes.io/hostname", node.spec.name},
                 {"kubernetes.io/os", "linux"},
                 {"kubernetes.io/arch", "amd64"},
                 {"beta.kubernetes.io/os", "linux"},
                 {"beta.kubernetes.io/arch", "amd64"}};
  if (node.is_control_plane()) labels["node-role.kubernetes.io/control-plane"] = "";
  for (const auto& [k, v] : node.kube_labels) labels[k] = v;
  json meta = {{"name", node.spec.name},
               {"uid", fmt::format("{:016x}-node", std::hash<std::string>{}(node.spec.name))},
               {"resourceVersion", std::to_string(node.kube_resource_version)},
               {"creationTimestamp", Timestamp(node.kube_created)},
               {"labels", labels}};
  meta["annotations"] = json::object();
  for (const auto& [k, v] : node.kube_annotations) meta["annotations"][k] = v;
  json spec = json::object();
  if (node.unschedulable) {
    spec["unschedulable"] = true;
    spec["taints"] = json::array({{{"key", "node.kubernetes.io/unschedulable"},
                                   {"effect", "NoSchedule"},
                                   {"timeAdded", Timestamp(scheduler_->WallNow())}}});
  }
  const std::string now = Timestamp(scheduler_->WallNow());
  json ready = {{"type", "Ready"}, {"lastHeartbeatTime", now}, {"lastTransitionTime", now}};
  if (node.kube_ready) {
    ready.update({{"status", "True"},
                  {"reason", "KubeletReady"},
                  {"message", "kubelet is posting ready status"}});
  } else if (node.up) {
    ready.update({{"status", "False"},
                  {"reason", "KubeletNotReady"},
                  {"message", "container runtime network not ready"}});
  } else {
    ready.update({{"status", "Unknown"},
                  {"reason", "NodeStatusUnknown"},
                  {"message", "Kubelet stopped posting node status."}});
  }
  json status = {{"conditions", json::array({ready})},
                 {"addresses", json::array({{{"type", "InternalIP"}, {"address", node.address}},
                                            {{"type", "Hostname"}, {"address", node.spec.name}}})},
                 {"nodeInfo",
                  {{"kubeletVersion", "v" + node.kubelet_version},
                   {"kubeProxyVersion", "v" + node.kubelet_version},
                   {"osImage", fmt::format("Talos ({})", node.tag)},
                   {"kernelVersion", "6.12.57-talos"},
                   {"containerRuntimeVersion", "containerd://2.1.5"},
                   {"operatingSystem", "linux"},
                   {"architecture", "amd64"},
                   {"bootID", node.boot_id},
                   {"machineID", fmt::format("{:032x}", std::hash<std::string>{}(node.spec.name))},
                   {"systemUUID", node.boot_id}}}};
  return {{"kind", "Node"},
          {"apiVersion", "v1"},
          {"metadata", meta},
          {"spec", spec},
          {"status", status}};
}

json SimCluster::KubePodJsonLocked(const KubePod& pod) const {
  json meta = {{"name", pod.name},
               {"namespace", pod.ns},
               {"uid", pod.uid},
               {"resourceVersion", std::to_string(pod.resource_version)},
               {"creationTimestamp", Timestamp(pod.created)},
               {"labels", pod.labels},
               {"annotations", pod.annotations}};
  if (pod.annotations.empty()) meta["annotations"] = json::object();
  if (!pod.owner_kind.empty()) {
    std::string owner = pod.owner_kind == "Node"        ? pod.node
                        : pod.owner_kind == "DaemonSet" ? pod.container
                                                        : pod.name + "-rs";
    std::string uid = pod.uid + "-owner";
    if (pod.fleet != nullptr) {
      owner = OwnerObjectName(pod.owner_kind, pod.ns, pod.owner_name);
      uid = StableUuid(fmt::format("{}/{}/{}", pod.owner_kind, pod.ns, owner));
    }
    json ref = {{"apiVersion", pod.owner_kind == "Node" ? "v1" : "apps/v1"},
                {"kind", pod.owner_kind},
                {"name", owner},
                {"uid", uid},
                {"controller", true}};
    if (pod.fleet != nullptr) ref["blockOwnerDeletion"] = true;
    meta["ownerReferences"] = json::array({ref});
  }
  const SimNode* node = nullptr;
  for (const auto& n : nodes_) {
    if (n->spec.name == pod.node) node = n.get();
  }
  const bool ready =
      pod.ready && node != nullptr && node->kube_ready && (pod.fleet == nullptr || pod.fleet->ready);
  json status = {
      {"phase", node == nullptr ? "Pending" : "Running"},
      {"conditions", json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})},
      {"containerStatuses", json::array({{{"name", pod.container},
                                          {"image", pod.image},
                                          {"ready", ready},
                                          {"restartCount", 0}}})}};
  if (node != nullptr) {
    status["hostIP"] = node->address;
    status["podIP"] = node->address;
  } else if (pod.fleet != nullptr) {
    status["conditions"].push_back({{"type", "PodScheduled"},
                                    {"status", "False"},
                                    {"reason", "Unschedulable"},
                                    {"message", UnschedulableMessageLocked(pod)}});
  }
  json spec = {{"containers", json::array({{{"name", pod.container}, {"image", pod.image}}})}};
  if (!pod.node.empty()) spec["nodeName"] = pod.node;
  if (pod.fleet != nullptr) FleetPodSpecJson(*pod.fleet, spec);
  return {{"kind", "Pod"},
          {"apiVersion", "v1"},
          {"metadata", meta},
          {"spec", spec},
          {"status", status}};
}

std::pair<int, json> SimCluster::EvictLocked(const std::string& ns, const std::string& name) {
  auto it = std::find_if(pods_.begin(), pods_.end(),
                         [&](const KubePod& p) { return p.ns == ns && p.name == name; });
  if (it == pods_.end()) {
    return {404,
            {{"kind", "Status"},
             {"apiVersion", "v1"},
             {"metadata", json::object()},
             {"status", "Failure"},
             {"message", fmt::format("pods \"{}\" not found", name)},
             {"reason", "NotFound"},
             {"details", {{"name", name}, {"kind", "pods"}}},
             {"code", 404}}};
  }
  // A Pending pod is deleted without looking at budgets (eviction.go canIgnorePDB).
  std::vector<const PdbSpec*> budgets;
  if (KubePodJsonLocked(*it)["status"]["phase"] != "Pending") {
    for (const auto& pdb : spec_.pdbs) {
      if (PdbSelects(pdb, *it)) budgets.push_back(&pdb);
    }
  }
  if (budgets.size() > 1) {
    return {500,
            {{"kind", "Status"},
             {"apiVersion", "v1"},
             {"metadata", json::object()},
             {"status", "Failure"},
             {"message", "This pod has more than one PodDisruptionBudget, which the eviction "
                         "subresource does not support."},
             {"code", 500}}};
  }
  if (budgets.size() == 1) {
    const PdbStatus st = PdbStatusLocked(*budgets.front());
    // unhealthyPodEvictionPolicy IfHealthyBudget (the default): a pod that is not Ready goes
    // without using up the budget while the application is not disrupted.
    const bool unhealthy_goes = !PodReadyLocked(*it) && st.current_healthy >= st.desired_healthy &&
                                st.desired_healthy > 0;
    if (!unhealthy_goes && st.disruptions_allowed == 0) {
      return {
          429,
          {{"kind", "Status"},
           {"apiVersion", "v1"},
           {"metadata", json::object()},
           {"status", "Failure"},
           {"message", "Cannot evict pod as it would violate the pod's disruption budget."},
           {"reason", "TooManyRequests"},
           {"details",
            {{"causes", json::array({{{"reason", "DisruptionBudget"},
                                      {"message", fmt::format("The disruption budget {} needs {} "
                                                              "healthy pods and has {} currently",
                                                              budgets.front()->name,
                                                              st.desired_healthy,
                                                              st.current_healthy)}}})}}},
           {"code", 429}}};
    }
  }
  KubePod evicted = *it;
  pods_.erase(it);
  if (SimNode* node = FindNodeLocked(evicted.node)) {
    JournalStateLocked(*node, "evict", fmt::format("{}/{}", ns, name));
  }
  RescheduleLocked(std::move(evicted));
  return {201,
          {{"kind", "Status"},
           {"apiVersion", "v1"},
           {"metadata", json::object()},
           {"status", "Success"},
           {"code", 201}}};
}

void SimCluster::CordonLocked(SimNode& node, bool cordon, const std::string& by) {
  if (node.unschedulable == cordon) return;
  node.unschedulable = cordon;
  node.kube_resource_version = NextResourceVersionLocked();
  JournalStateLocked(node, cordon ? "cordon" : "uncordon", by);
  if (!cordon) {
    for (auto& pod : pods_) {
      if (pod.avoid_node == node.spec.name) pod.avoid_node.clear();
    }
    SchedulePendingLocked();
  }
  NotifyLocked();
}

void SimCluster::DrainLocked(SimNode& node) {
  std::vector<std::pair<std::string, std::string>> victims;
  for (const auto& pod : pods_) {
    if (pod.node == node.spec.name && pod.owner_kind != "DaemonSet" && pod.owner_kind != "Node") {
      victims.emplace_back(pod.ns, pod.name);
    }
  }
  for (const auto& [ns, name] : victims) EvictLocked(ns, name);
}

void SimCluster::UpdateNodeLocked(SimNode& node, const json& patched) {
  auto at = [](const json& object, const char* key) {
    return object.is_object() && object.contains(key) ? object.at(key) : json();
  };
  auto strings = [](const json& from) {
    std::map<std::string, std::string> out;
    if (!from.is_object()) return out;
    for (const auto& [k, v] : from.items()) {
      if (v.is_string()) out[k] = v.get<std::string>();
    }
    return out;
  };
  const json meta = at(patched, "metadata");
  node.kube_labels = strings(at(meta, "labels"));
  node.kube_annotations = strings(at(meta, "annotations"));
  node.kube_resource_version = NextResourceVersionLocked();
  const json unschedulable = at(at(patched, "spec"), "unschedulable");
  CordonLocked(node, unschedulable.is_boolean() && unschedulable.get<bool>(), "kube-api");
  SchedulePendingLocked();  // new labels may match a pending pod's nodeSelector
}

}  // namespace tr::sim
