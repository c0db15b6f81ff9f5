#include "reconciler/clients/kube/kube_json.h"

#include "core/pending_mark.h"
#include "reconciler/runtime/json_fields.h"

namespace tr::reconciler::kube {
namespace {

using json_fields::Field;
using json_fields::Flag;
using json_fields::Integer;
using json_fields::List;
using json_fields::Text;
using nlohmann::json;

KubeNode NodeFromJson(const json& item) {
  KubeNode node;
  const json& meta = Field(item, "metadata");
  node.name = Text(meta, "name");
  node.control_plane = Field(meta, "labels").contains("node-role.kubernetes.io/control-plane");
  node.unschedulable = Flag(Field(item, "spec"), "unschedulable");
  const json& status = Field(item, "status");
  node.ready = ConditionTrue(status, "Ready");
  for (const json& address : List(status, "addresses")) {
    node.addresses.push_back(Text(address, "address"));
    if (node.internal_ip.empty() && Text(address, "type") == "InternalIP") {
      node.internal_ip = node.addresses.back();
    }
  }
  node.kubelet_version = Text(Field(status, "nodeInfo"), "kubeletVersion");
  static const std::string kPendingKey(core::kPendingInstallAnnotation);
  const json& pending = Field(Field(meta, "annotations"), kPendingKey.c_str());
  if (pending.is_string()) node.pending_install = pending.get<std::string>();
  return node;
}

KubePod PodFromJson(const json& item) {
  KubePod pod;
  const json& meta = Field(item, "metadata");
  pod.namespace_name = Text(meta, "namespace");
  pod.name = Text(meta, "name");
  pod.node = Text(Field(item, "spec"), "nodeName");
  for (const json& owner : List(meta, "ownerReferences")) {
    if (Flag(owner, "controller")) pod.owner_kind = Text(owner, "kind");
  }
  pod.mirror = !Field(Field(meta, "annotations"), "kubernetes.io/config.mirror").is_null();
  const std::string phase = Text(Field(item, "status"), "phase");
  pod.terminal = phase == "Succeeded" || phase == "Failed";
  return pod;
}

KubePodDetail PodDetailFromJson(const json& item) {
  KubePodDetail detail{PodFromJson(item), "", "", false, ""};
  const json& status = Field(item, "status");
  detail.host_ip = Text(status, "hostIP");
  detail.ready = ConditionTrue(status, "Ready");
  const json& containers = List(Field(item, "spec"), "containers");
  if (!containers.empty()) detail.image = Text(containers.front(), "image");
  detail.config_version =
      Text(Field(Field(item, "metadata"), "annotations"), "talos.dev/config-version");
  return detail;
}

template <typename T, typename Decode>
std::vector<T> Items(const json& list, Decode decode) {
  std::vector<T> out;
  for (const json& item : List(list, "items")) out.push_back(decode(item));
  return out;
}

}  // namespace

bool ConditionTrue(const json& status, const char* type) {
  bool is_true = false;
  for (const json& condition : List(status, "conditions")) {
    if (Text(condition, "type") == type) is_true = Text(condition, "status") == "True";
  }
  return is_true;
}

std::vector<KubeNode> NodesFromList(const json& list) {
  return Items<KubeNode>(list, NodeFromJson);
}

std::vector<KubePod> PodsFromList(const json& list) { return Items<KubePod>(list, PodFromJson); }

std::vector<KubePodDetail> PodDetailsFromList(const json& list) {
  return Items<KubePodDetail>(list, PodDetailFromJson);
}

std::vector<core::WorkloadStatus> WorkloadsFromList(std::string_view kind, const json& list) {
  return Items<core::WorkloadStatus>(
      list, [kind](const json& item) { return WorkloadFromJson(kind, item); });
}

core::WorkloadStatus WorkloadFromJson(std::string_view kind, const json& item) {
  core::WorkloadStatus w;
  const json& meta = Field(item, "metadata");
  const json& spec = Field(item, "spec");
  const json& status = Field(item, "status");
  w.kind = std::string(kind);
  w.namespace_name = Text(meta, "namespace");
  w.name = Text(meta, "name");
  w.generation = Integer(meta, "generation", 0);
  w.observed_generation = Integer(status, "observedGeneration", 0);
  const bool daemon_set = kind == "DaemonSet";
  w.desired =
      daemon_set ? Integer(status, "desiredNumberScheduled", 0) : Integer(spec, "replicas", 1);
  w.current = Integer(status, daemon_set ? "currentNumberScheduled" : "replicas", 0);
  w.updated = Integer(status, daemon_set ? "updatedNumberScheduled" : "updatedReplicas", 0);
  w.ready = Integer(status, daemon_set ? "numberReady" : "readyReplicas", 0);
  w.available = Integer(status, daemon_set ? "numberAvailable" : "availableReplicas", 0);
  return w;
}

size_t ItemCount(const json& list) { return List(list, "items").size(); }

std::string ListVersion(const json& list) {
  return Text(Field(list, "metadata"), "resourceVersion");
}

ApiError ApiErrorFromBody(std::string_view body) {
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  ApiError error{Text(parsed, "message"), Text(parsed, "reason")};
  // An eviction's 429 names the budget only here ("The disruption budget web needs 2 healthy
  // pods and has 2 currently"); the message alone does not say which budget refused.
  std::string causes;
  for (const json& cause : List(Field(parsed, "details"), "causes")) {
    const std::string text = Text(cause, "message");
    if (!text.empty()) causes += (causes.empty() ? "" : "; ") + text;
  }
  if (!error.message.empty() && !causes.empty()) error.message += " (" + causes + ")";
  return error;
}

}  // namespace tr::reconciler::kube
