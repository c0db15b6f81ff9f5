// The fleet file's Kubernetes objects beyond pods and nodes: the pods' controllers
// (ReplicaSets, StatefulSets, DaemonSets), PodDisruptionBudgets with their status as the
// disruption controller computes it, PersistentVolumes, their bound claims and StorageClasses.
#include "tests/sim/node/kube_objects.h"

#include <map>
#include <set>

#include "fmt/chrono.h"
#include "fmt/format.h"
#include "tests/sim/common/ids.h"
#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {
namespace {

using nlohmann::json;

std::string CreatedAt(WallTime t) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::time_point_cast<std::chrono::seconds>(t));
}

// intstr.GetScaledValueFromIntOrPercent with roundUp (disruption.go rounds both fields up).
int ScaledUp(const IntOrPercent& v, int total) {
  return v.percent ? (v.value * total + 99) / 100 : v.value;
}

json IntOrPercentJson(const IntOrPercent& v) {
  return v.percent ? json(fmt::format("{}%", v.value)) : json(v.value);
}

constexpr const char* kStorage = "10Gi";

}  // namespace

bool PdbSelects(const PdbSpec& pdb, const KubePod& pod) {
  if (pod.ns != pdb.namespace_name || pdb.match_labels.empty()) return false;
  for (const auto& [k, v] : pdb.match_labels) {
    auto it = pod.labels.find(k);
    if (it == pod.labels.end() || it->second != v) return false;
  }
  return true;
}

std::string OwnerObjectName(const std::string& kind, const std::string& ns,
                            const std::string& owner_name) {
  if (kind != "ReplicaSet") return owner_name;
  const uint64_t hash = std::hash<std::string>{}(ns + "/" + owner_name);
  return fmt::format("{}-{:010x}", owner_name, hash & 0xff'ffff'ffffULL);
}

json LabelsJson(const KubeLabels& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) out[k] = v;
  return out;
}

void FleetPodSpecJson(const PodSpec& pod, json& spec) {
  if (!pod.node_selector.empty()) spec["nodeSelector"] = LabelsJson(pod.node_selector);
  if (!pod.anti_affinity.empty()) {
    spec["affinity"] = {
        {"podAntiAffinity",
         {{"requiredDuringSchedulingIgnoredDuringExecution",
           json::array({{{"labelSelector", {{"matchLabels", LabelsJson(pod.anti_affinity)}}},
                         {"topologyKey", "kubernetes.io/hostname"}}})}}}};
  }
  if (pod.spread) {
    spec["topologySpreadConstraints"] =
        json::array({{{"maxSkew", pod.spread->max_skew},
                      {"topologyKey", "kubernetes.io/hostname"},
                      {"whenUnsatisfiable", "DoNotSchedule"},
                      {"labelSelector", {{"matchLabels", LabelsJson(pod.spread->labels)}}}}});
  }
  if (pod.volumes.empty()) return;
  json volumes = json::array();
  for (const auto& v : pod.volumes) {
    json volume = {{"name", v.name}};
    if (v.empty_dir) volume["emptyDir"] = json::object();
    if (!v.host_path.empty()) volume["hostPath"] = {{"path", v.host_path}, {"type", ""}};
    if (!v.claim.empty()) volume["persistentVolumeClaim"] = {{"claimName", v.claim}};
    volumes.push_back(std::move(volume));
  }
  spec["volumes"] = std::move(volumes);
}

bool SimCluster::PodReadyLocked(const KubePod& pod) const {
  return KubePodJsonLocked(pod)["status"]["conditions"][0]["status"] == "True";
}

SimCluster::PdbStatus SimCluster::PdbStatusLocked(const PdbSpec& pdb) const {
  PdbStatus st;
  int pods = 0;
  // expectedPods of a percentage or maxUnavailable: the sum of the pods' controllers' scale;
  // pods without a controller do not count (disruption.go getExpectedScale).
  std::map<std::string, int> scale;
  for (const auto& pod : pods_) {
    if (!PdbSelects(pdb, pod)) continue;
    ++pods;
    if (PodReadyLocked(pod)) ++st.current_healthy;
    if (pod.owner_kind.empty()) continue;
    if (pod.owner_kind == "DaemonSet" || pod.owner_kind == "Node") {
      st.sync_error = fmt::format("{} does not implement the scale subresource",
                                  pod.owner_kind == "Node" ? "nodes" : "daemonsets.apps");
      continue;
    }
    int replicas = 0;
    for (const auto& spec : spec_.pods) {
      replicas += spec.namespace_name == pod.ns && spec.owner_name == pod.owner_name &&
                  PodOwnerName(spec.owner) == pod.owner_kind;
    }
    scale[pod.owner_kind + "/" + pod.owner_name] = replicas;
  }
  int scaled = 0;
  for (const auto& [owner, replicas] : scale) scaled += replicas;
  const bool by_scale =
      pdb.max_unavailable.has_value() || (pdb.min_available && pdb.min_available->percent);
  if (by_scale && !st.sync_error.empty()) return {.current_healthy = 0,
                                                  .desired_healthy = 0,
                                                  .expected_pods = 0,
                                                  .disruptions_allowed = 0,
                                                  .sync_error = st.sync_error};
  st.sync_error.clear();
  if (pdb.max_unavailable) {
    st.expected_pods = scaled;
    st.desired_healthy = std::max(0, scaled - ScaledUp(*pdb.max_unavailable, scaled));
  } else if (pdb.min_available->percent) {
    st.expected_pods = scaled;
    st.desired_healthy = ScaledUp(*pdb.min_available, scaled);
  } else {
    st.expected_pods = pods;
    st.desired_healthy = pdb.min_available->value;
  }
  st.disruptions_allowed = st.expected_pods <= 0 ? 0 : std::max(0, st.current_healthy - st.desired_healthy);
  return st;
}

json SimCluster::PdbJsonLocked(const PdbSpec& pdb) const {
  const PdbStatus st = PdbStatusLocked(pdb);
  json spec = {{"selector", {{"matchLabels", LabelsJson(pdb.match_labels)}}}};
  if (pdb.min_available) spec["minAvailable"] = IntOrPercentJson(*pdb.min_available);
  if (pdb.max_unavailable) spec["maxUnavailable"] = IntOrPercentJson(*pdb.max_unavailable);
  const std::string created = CreatedAt(nodes_.front()->kube_created);
  json condition = {{"type", "DisruptionAllowed"},
                    {"status", st.disruptions_allowed > 0 ? "True" : "False"},
                    {"reason", !st.sync_error.empty()        ? "SyncFailed"
                               : st.disruptions_allowed > 0 ? "SufficientPods"
                                                            : "InsufficientPods"},
                    {"message", st.sync_error},
                    {"observedGeneration", 1},
                    {"lastTransitionTime", created}};
  return {{"kind", "PodDisruptionBudget"},
          {"apiVersion", "policy/v1"},
          {"metadata",
           {{"name", pdb.name},
            {"namespace", pdb.namespace_name},
            {"uid", StableUuid("pdb/" + pdb.namespace_name + "/" + pdb.name)},
            {"resourceVersion", std::to_string(resource_version_)},
            {"generation", 1},
            {"creationTimestamp", created}}},
          {"spec", spec},
          {"status",
           {{"observedGeneration", 1},
            {"disruptionsAllowed", st.disruptions_allowed},
            {"currentHealthy", st.current_healthy},
            {"desiredHealthy", st.desired_healthy},
            {"expectedPods", st.expected_pods},
            {"conditions", json::array({condition})}}}};
}

json SimCluster::OwnerObjectsLocked(const std::string& plural) const {
  const std::string kind = plural == "replicasets"    ? "ReplicaSet"
                           : plural == "statefulsets" ? "StatefulSet"
                                                      : "DaemonSet";
  // "<ns>/<owner_name>" -> the fleet file's pods of that controller.
  std::map<std::string, std::vector<const PodSpec*>> owners;
  for (const auto& pod : spec_.pods) {
    if (PodOwnerName(pod.owner) == kind) {
      owners[pod.namespace_name + "/" + pod.owner_name].push_back(&pod);
    }
  }
  const std::string created = CreatedAt(nodes_.front()->kube_created);
  json items = json::array();
  for (const auto& [key, members] : owners) {
    const std::string& ns = members.front()->namespace_name;
    const std::string& owner = members.front()->owner_name;
    // The selector: the labels every pod of the controller carries.
    json selector = LabelsJson(members.front()->labels);
    for (const PodSpec* m : members) {
      for (auto it = selector.begin(); it != selector.end();) {
        bool shared = false;
        for (const auto& [k, v] : m->labels) shared |= k == it.key() && v == it.value();
        it = shared ? std::next(it) : selector.erase(it);
      }
    }
    int current = 0, ready = 0;
    for (const auto& pod : pods_) {
      if (pod.fleet == nullptr || pod.owner_kind != kind || pod.ns != ns ||
          pod.owner_name != owner) {
        continue;
      }
      current += pod.node.empty() ? 0 : 1;
      ready += PodReadyLocked(pod) ? 1 : 0;
    }
    const std::string name = OwnerObjectName(kind, ns, owner);
    const int replicas = static_cast<int>(members.size());
    json spec = {{"selector", {{"matchLabels", selector}}},
                 {"template",
                  {{"metadata", {{"labels", selector}}},
                   {"spec",
                    {{"containers",
                      json::array({{{"name", "app"}, {"image", "registry.example/app:1.0"}}})}}}}}};
    json status = {{"observedGeneration", 1}};
    if (kind == "DaemonSet") {
      status.update({{"desiredNumberScheduled", replicas},
                     {"currentNumberScheduled", current},
                     {"updatedNumberScheduled", current},
                     {"numberReady", ready},
                     {"numberAvailable", ready},
                     {"numberMisscheduled", 0}});
    } else {
      spec["replicas"] = replicas;
      if (kind == "StatefulSet") spec["serviceName"] = owner;
      status.update({{"replicas", current},
                     {"readyReplicas", ready},
                     {"availableReplicas", ready},
                     {kind == "StatefulSet" ? "currentReplicas" : "fullyLabeledReplicas", current}});
    }
    items.push_back({{"kind", kind},
                     {"apiVersion", "apps/v1"},
                     {"metadata",
                      {{"name", name},
                       {"namespace", ns},
                       {"uid", StableUuid(fmt::format("{}/{}/{}", kind, ns, name))},
                       {"resourceVersion", std::to_string(resource_version_)},
                       {"generation", 1},
                       {"creationTimestamp", created},
                       {"labels", selector}}},
                     {"spec", spec},
                     {"status", status}});
  }
  return items;
}

json SimCluster::PersistentVolumesJsonLocked() const {
  const std::string created = CreatedAt(nodes_.front()->kube_created);
  json items = json::array();
  for (const auto& pv : spec_.persistent_volumes) {
    json spec = {{"capacity", {{"storage", kStorage}}},
                 {"accessModes", json::array({"ReadWriteOnce"})},
                 {"persistentVolumeReclaimPolicy", pv.node.empty() ? "Delete" : "Retain"},
                 {"volumeMode", "Filesystem"},
                 {"claimRef",
                  {{"kind", "PersistentVolumeClaim"},
                   {"namespace", pv.claim_namespace},
                   {"name", pv.claim_name},
                   {"uid", StableUuid("pvc/" + pv.claim_namespace + "/" + pv.claim_name)},
                   {"apiVersion", "v1"}}}};
    if (!pv.storage_class.empty()) spec["storageClassName"] = pv.storage_class;
    if (!pv.node.empty()) {
      spec["local"] = {{"path", pv.host_path.empty() ? "/var/mnt/" + pv.name : pv.host_path}};
      spec["nodeAffinity"] = {
          {"required",
           {{"nodeSelectorTerms",
             json::array({{{"matchExpressions",
                            json::array({{{"key", "kubernetes.io/hostname"},
                                          {"operator", "In"},
                                          {"values", json::array({pv.node})}}})}}})}}}};
    } else if (!pv.host_path.empty()) {
      spec["hostPath"] = {{"path", pv.host_path}, {"type", ""}};
    } else {
      std::string driver = "csi.example.com";
      for (const auto& sc : spec_.storage_classes) {
        if (sc.name == pv.storage_class) driver = sc.provisioner;
      }
      spec["csi"] = {{"driver", driver}, {"volumeHandle", pv.name}};
    }
    items.push_back({{"kind", "PersistentVolume"},
                     {"apiVersion", "v1"},
                     {"metadata",
                      {{"name", pv.name},
                       {"uid", StableUuid("pv/" + pv.name)},
                       {"resourceVersion", std::to_string(resource_version_)},
                       {"creationTimestamp", created},
                       {"finalizers", json::array({"kubernetes.io/pv-protection"})}}},
                     {"spec", spec},
                     {"status", {{"phase", "Bound"}, {"lastPhaseTransitionTime", created}}}});
  }
  return items;
}

json SimCluster::PersistentVolumeClaimsJsonLocked() const {
  const std::string created = CreatedAt(nodes_.front()->kube_created);
  json items = json::array();
  for (const auto& pv : spec_.persistent_volumes) {
    json annotations = {{"pv.kubernetes.io/bind-completed", "yes"},
                        {"pv.kubernetes.io/bound-by-controller", "yes"}};
    for (const auto& sc : spec_.storage_classes) {
      if (sc.name == pv.storage_class && sc.wait_for_first_consumer && !pv.node.empty()) {
        annotations["volume.kubernetes.io/selected-node"] = pv.node;
      }
    }
    json spec = {{"accessModes", json::array({"ReadWriteOnce"})},
                 {"resources", {{"requests", {{"storage", kStorage}}}}},
                 {"volumeName", pv.name},
                 {"volumeMode", "Filesystem"}};
    if (!pv.storage_class.empty()) spec["storageClassName"] = pv.storage_class;
    items.push_back(
        {{"kind", "PersistentVolumeClaim"},
         {"apiVersion", "v1"},
         {"metadata",
          {{"name", pv.claim_name},
           {"namespace", pv.claim_namespace},
           {"uid", StableUuid("pvc/" + pv.claim_namespace + "/" + pv.claim_name)},
           {"resourceVersion", std::to_string(resource_version_)},
           {"creationTimestamp", created},
           {"annotations", annotations},
           {"finalizers", json::array({"kubernetes.io/pvc-protection"})}}},
         {"spec", spec},
         {"status",
          {{"phase", "Bound"},
           {"accessModes", json::array({"ReadWriteOnce"})},
           {"capacity", {{"storage", kStorage}}}}}});
  }
  return items;
}

json SimCluster::StorageClassesJsonLocked() const {
  const std::string created = CreatedAt(nodes_.front()->kube_created);
  json items = json::array();
  for (const auto& sc : spec_.storage_classes) {
    items.push_back(
        {{"kind", "StorageClass"},
         {"apiVersion", "storage.k8s.io/v1"},
         {"metadata",
          {{"name", sc.name},
           {"uid", StableUuid("storageclass/" + sc.name)},
           {"resourceVersion", std::to_string(resource_version_)},
           {"creationTimestamp", created}}},
         {"provisioner", sc.provisioner},
         {"reclaimPolicy", "Delete"},
         {"volumeBindingMode", sc.wait_for_first_consumer ? "WaitForFirstConsumer" : "Immediate"}});
  }
  return items;
}

}  // namespace tr::sim
