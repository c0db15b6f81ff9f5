#include "reconciler/clients/kube/workload_json.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "reconciler/clients/kube/kube_json.h"
#include "reconciler/runtime/json_fields.h"

namespace tr::reconciler::kube {
namespace {

using json_fields::Field;
using json_fields::Flag;
using json_fields::Integer;
using json_fields::List;
using json_fields::Text;
using nlohmann::json;

constexpr std::string_view kHostname = "kubernetes.io/hostname";

core::LabelSet Labels(const json& object) {
  core::LabelSet labels;
  if (!object.is_object()) return labels;
  for (const auto& [key, value] : object.items()) {
    if (value.is_string()) labels[key] = value.get<std::string>();
  }
  return labels;
}

core::LabelSet MatchLabels(const json& selector) { return Labels(Field(selector, "matchLabels")); }

// The single-valued `In` expressions of a node selector's only term, as labels; with several
// terms (any one may hold) nothing is required for sure.
core::LabelSet RequiredNodeLabels(const json& node_selector) {
  core::LabelSet labels;
  const json& terms = List(node_selector, "nodeSelectorTerms");
  if (terms.size() != 1) return labels;
  for (const json& e : List(terms.front(), "matchExpressions")) {
    const json& values = List(e, "values");
    if (Text(e, "operator") == "In" && values.size() == 1 && values.front().is_string()) {
      labels[Text(e, "key")] = values.front().get<std::string>();
    }
  }
  return labels;
}

// minAvailable / maxUnavailable: 2 or "50%"; nullopt when absent or neither.
std::optional<core::CountOrPercent> CountOrPercentOf(const json& value) {
  if (value.is_number_integer()) {
    return core::CountOrPercent{static_cast<int>(value.get<int64_t>()), false};
  }
  if (!value.is_string()) return std::nullopt;
  std::string text = value.get<std::string>();
  const bool percent = !text.empty() && text.back() == '%';
  if (percent) text.pop_back();
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return core::CountOrPercent{std::stoi(text), percent};
}

void ReadScheduling(const json& spec, core::WorkloadPod& pod) {
  pod.node_selector = Labels(Field(spec, "nodeSelector"));
  const json& affinity = Field(spec, "affinity");
  for (auto& [key, value] : RequiredNodeLabels(Field(
           Field(affinity, "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"))) {
    pod.node_selector.emplace(key, value);
  }
  for (const json& term : List(Field(affinity, "podAntiAffinity"),
                               "requiredDuringSchedulingIgnoredDuringExecution")) {
    if (Text(term, "topologyKey") == kHostname) {
      pod.anti_affinity.push_back(MatchLabels(Field(term, "labelSelector")));
    }
  }
  for (const json& c : List(spec, "topologySpreadConstraints")) {
    if (Text(c, "topologyKey") == kHostname && Text(c, "whenUnsatisfiable") == "DoNotSchedule") {
      pod.spread.push_back({static_cast<int>(Integer(c, "maxSkew", 1)),
                            MatchLabels(Field(c, "labelSelector"))});
    }
  }
}

void ReadTolerations(const json& spec, core::WorkloadPod& pod) {
  for (const json& t : List(spec, "tolerations")) {
    const std::string key = Text(t, "key");
    const std::string effect = Text(t, "effect");
    if (!effect.empty() && effect != "NoSchedule" && effect != "NoExecute") continue;
    if (key.empty() && Text(t, "operator") == "Exists") pod.tolerates_all = true;
    if (!key.empty()) pod.tolerations.push_back(key);
  }
}

void ReadVolumes(const json& spec, const ClaimNodes& claims, core::WorkloadPod& pod) {
  for (const json& volume : List(spec, "volumes")) {
    if (volume.contains("emptyDir")) pod.empty_dir = true;
    const std::string path = Text(Field(volume, "hostPath"), "path");
    if (!path.empty()) pod.host_paths.push_back(path);
    const std::string claim = Text(Field(volume, "persistentVolumeClaim"), "claimName");
    auto bound = claim.empty() ? claims.end() : claims.find(pod.namespace_name + "/" + claim);
    if (bound != claims.end()) pod.bound_node = bound->second == kOnItsNode ? pod.node : bound->second;
  }
}

core::WorkloadPod PodOf(const json& item, const ClaimNodes& claims) {
  core::WorkloadPod pod;
  const json& meta = Field(item, "metadata");
  pod.namespace_name = Text(meta, "namespace");
  pod.name = Text(meta, "name");
  pod.labels = Labels(Field(meta, "labels"));
  for (const json& owner : List(meta, "ownerReferences")) {
    if (!Flag(owner, "controller")) continue;
    pod.owner_kind = Text(owner, "kind");
    pod.owner_name = Text(owner, "name");
  }
  // A static pod's mirror: annotated, and owned by its Node.
  pod.mirror = !Field(Field(meta, "annotations"), "kubernetes.io/config.mirror").is_null() ||
               pod.owner_kind == "Node";
  const json& spec = Field(item, "spec");
  pod.node = Text(spec, "nodeName");
  const json& status = Field(item, "status");
  const std::string phase = Text(status, "phase");
  pod.terminal = phase == "Succeeded" || phase == "Failed";
  pod.ready = ConditionTrue(status, "Ready");
  ReadScheduling(spec, pod);
  ReadTolerations(spec, pod);
  ReadVolumes(spec, claims, pod);
  return pod;
}

}  // namespace

std::string PinnedNode(const json& volume) {
  const core::LabelSet labels =
      RequiredNodeLabels(Field(Field(Field(volume, "spec"), "nodeAffinity"), "required"));
  auto host = labels.find(std::string(kHostname));
  return host == labels.end() ? "" : host->second;
}

bool BindsToOneNode(const json& storage_class) {
  static constexpr std::array<std::string_view, 5> kLocal = {
      "rancher.io/local-path", "kubernetes.io/no-provisioner", "openebs.io/local",
      "topolvm.io", "local.csi.openebs.io"};
  const std::string provisioner = Text(storage_class, "provisioner");
  return std::find(kLocal.begin(), kLocal.end(), provisioner) != kLocal.end();
}

void AddLocalClasses(const json& class_list, std::vector<std::string>& into) {
  for (const json& c : List(class_list, "items")) {
    if (BindsToOneNode(c)) into.push_back(Text(Field(c, "metadata"), "name"));
  }
}

void AddPinnedVolumes(const json& volume_list, std::map<std::string, std::string>& into) {
  for (const json& v : List(volume_list, "items")) {
    std::string node = PinnedNode(v);
    if (!node.empty()) into[Text(Field(v, "metadata"), "name")] = std::move(node);
  }
}

void AddClaims(const json& claim_list, const std::map<std::string, std::string>& pinned,
               const std::vector<std::string>& local_classes, ClaimNodes& into) {
  for (const json& claim : List(claim_list, "items")) {
    const json& meta = Field(claim, "metadata");
    const json& spec = Field(claim, "spec");
    const std::string key = Text(meta, "namespace") + "/" + Text(meta, "name");
    auto volume = pinned.find(Text(spec, "volumeName"));
    if (volume != pinned.end()) {
      into[key] = volume->second;
    } else if (std::find(local_classes.begin(), local_classes.end(),
                         Text(spec, "storageClassName")) != local_classes.end()) {
      into[key] = kOnItsNode;
    }
  }
}

void AddPods(const json& pod_list, const ClaimNodes& claims, std::vector<core::WorkloadPod>& into) {
  for (const json& item : List(pod_list, "items")) into.push_back(PodOf(item, claims));
}

void AddBudgets(const json& budget_list, std::vector<core::DisruptionBudget>& into) {
  for (const json& item : List(budget_list, "items")) {
    const json& meta = Field(item, "metadata");
    const json& spec = Field(item, "spec");
    // A null selector matches no pod; an empty one ({}) every pod of the namespace.
    if (!Field(spec, "selector").is_object()) continue;
    into.push_back({Text(meta, "namespace"), Text(meta, "name"),
                    MatchLabels(Field(spec, "selector")),
                    CountOrPercentOf(Field(spec, "minAvailable")),
                    CountOrPercentOf(Field(spec, "maxUnavailable"))});
  }
}

void AddNodes(const json& node_list, std::vector<core::WorkloadNode>& into) {
  for (const json& item : List(node_list, "items")) {
    const json& meta = Field(item, "metadata");
    core::WorkloadNode node;
    node.name = Text(meta, "name");
    node.labels = Labels(Field(meta, "labels"));
    node.control_plane = node.labels.contains("node-role.kubernetes.io/control-plane");
    node.schedulable = !Flag(Field(item, "spec"), "unschedulable");
    node.ready = ConditionTrue(Field(item, "status"), "Ready");
    for (const json& taint : List(Field(item, "spec"), "taints")) {
      const std::string effect = Text(taint, "effect");
      // The cordon's own taint is `schedulable`, which a drained node changes.
      if ((effect == "NoSchedule" || effect == "NoExecute") &&
          Text(taint, "key") != "node.kubernetes.io/unschedulable") {
        node.taints.push_back(Text(taint, "key"));
      }
    }
    into.push_back(std::move(node));
  }
}

}  // namespace tr::reconciler::kube
