#include "tests/sim/catalog/fleet_spec.h"

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "core/text.h"
#include "core/version.h"
#include "fmt/format.h"
#include "tests/sim/catalog/image_registry.h"
#include "tests/sim/common/yaml_child.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

constexpr std::pair<FaultKind, std::string_view> kFaultNames[] = {
    {FaultKind::kBadInstallerImage, "bad_installer_image"},
    {FaultKind::kBootFailure, "boot_failure"},
    {FaultKind::kNeverReturns, "never_returns"},
    {FaultKind::kSlowReboot, "slow_reboot"},
    {FaultKind::kEtcdUnhealthy, "etcd_unhealthy"},
    {FaultKind::kUpgradeLockHeld, "upgrade_lock_held"},
    {FaultKind::kApiUnreachable, "api_unreachable"},
    {FaultKind::kImagePullFailure, "image_pull_failure"},
    {FaultKind::kStaticPodNotReady, "static_pod_not_ready"},
    {FaultKind::kKubeletNotReturning, "kubelet_not_returning"},
    {FaultKind::kRemovedApiInUse, "removed_api_in_use"},
    {FaultKind::kRebootAfterPull, "reboot_after_pull"},
    {FaultKind::kEphemeralWiped, "ephemeral_wiped"},
    {FaultKind::kNeverReady, "never_ready"},
    {FaultKind::kPowerCycle, "power_cycle"},
};

absl::Status Invalid(std::string_view where, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("fleet file: {}: {}", where, what));
}

// "250ms", "4s", "2m", or a bare number of milliseconds.
absl::StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view where,
                                                        const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() &&
         ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) {
    ++digits;
  }
  double value = 0;
  try {
    value = std::stod(text.substr(0, digits));
  } catch (const std::exception&) {
    return Invalid(where, fmt::format("bad duration \"{}\"", text));
  }
  const std::string unit = text.substr(digits);
  double ms = 0;
  if (unit.empty() || unit == "ms") {
    ms = value;
  } else if (unit == "s") {
    ms = value * 1000;
  } else if (unit == "m") {
    ms = value * 60'000;
  } else {
    return Invalid(where, fmt::format("bad duration unit in \"{}\" (use ms, s or m)", text));
  }
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

bool IsLoopbackIpv4(const std::string& address) {
  auto parts = core::Split(address, '.');
  if (parts.size() != 4 || parts[0] != "127") return false;
  for (auto part : parts) {
    int v = 0;
    if (!core::IsDigits(part) || part.size() > 3) return false;
    std::from_chars(part.data(), part.data() + part.size(), v);
    if (v > 255) return false;
  }
  return true;
}

absl::StatusOr<Fault> ParseFault(std::string_view where, const YAML::Node& node) {
  auto kind = ParseFaultKind(node["kind"].as<std::string>(""));
  if (!kind.ok()) return Invalid(where, std::string(kind.status().message()));
  Fault fault{.kind = *kind, .count = node["count"].as<int>(-1), .delay = {}, .image = {}};
  if (node["delay"]) {
    auto delay = ParseDuration(where, node["delay"].as<std::string>());
    if (!delay.ok()) return delay.status();
    fault.delay = *delay;
  }
  fault.image = node["image"].as<std::string>("");
  if (fault.kind == FaultKind::kSlowReboot && fault.delay.count() <= 0) {
    return Invalid(where, "slow_reboot needs a positive delay");
  }
  return fault;
}

// `config:` of a node (absent: generated); the documents of a migrated shape exist from Talos
// 1.14 only.
absl::StatusOr<ConfigShape> ParseConfigShapeOf(const std::string& where, const YAML::Node& y,
                                               const core::Version& talos) {
  if (!y["config"]) return ConfigShape::kGenerated;
  auto shape = ParseConfigShape(y["config"].as<std::string>(""));
  if (!shape.ok()) return Invalid(where, std::string(shape.status().message()));
  const bool documents = *shape == ConfigShape::kMigrated || *shape == ConfigShape::kPartlyMigrated;
  if (documents && talos.Minor() < core::MinorVersion{1, 14}) {
    return Invalid(where, fmt::format("config {} needs Talos 1.14 or later (the Kubernetes "
                                      "documents do not exist before)",
                                      ConfigShapeName(*shape)));
  }
  return shape;
}

// `image_verification:` of a node: deny or skip rules (the document exists from Talos 1.13;
// signature verifiers are not simulated).
absl::StatusOr<std::vector<ImageVerificationRuleSpec>> ParseImageVerification(
    const std::string& where, const YAML::Node& y, const core::Version& talos) {
  std::vector<ImageVerificationRuleSpec> rules;
  if (!y) return rules;
  if (talos.Minor() < core::MinorVersion{1, 13}) {
    return Invalid(where, "image_verification needs Talos 1.13 or later");
  }
  for (const auto& r : y) {
    ImageVerificationRuleSpec rule;
    rule.image = r["image"].as<std::string>("");
    rule.deny = r["deny"].as<bool>(false);
    rule.skip = r["skip"].as<bool>(false);
    if (rule.image.empty() || rule.deny == rule.skip) {
      return Invalid(where, "an image_verification rule needs an image and one of deny or skip");
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

absl::StatusOr<NodeSpec> ParseNode(const std::string& cluster, const YAML::Node& y) {
  NodeSpec node;
  node.name = y["name"].as<std::string>("");
  const std::string where = fmt::format("cluster {} node {}", cluster, node.name);
  if (node.name.empty()) return Invalid(fmt::format("cluster {}", cluster), "node without name");
  const std::string role = y["role"].as<std::string>("worker");
  if (role == "controlplane" || role == "control-plane") {
    node.role = NodeRole::kControlPlane;
  } else if (role != "worker") {
    return Invalid(where, fmt::format("role must be controlplane or worker, not \"{}\"", role));
  }
  auto talos = core::ParseTalosVersion(y["talos"].as<std::string>(""));
  if (!talos.ok())
    return Invalid(where, fmt::format("talos: {}", std::string(talos.status().message())));
  node.talos_version = talos->Tag();
  auto kube = core::ParseKubernetesVersion(y["kubernetes"].as<std::string>(""));
  if (!kube.ok())
    return Invalid(where, fmt::format("kubernetes: {}", std::string(kube.status().message())));
  node.kubernetes_version = kube->ToString();
  node.address = y["address"].as<std::string>("");
  if (!node.address.empty() && !IsLoopbackIpv4(node.address)) {
    return Invalid(where, fmt::format("address {} is not in 127.0.0.0/8", node.address));
  }
  node.platform = y["platform"].as<std::string>("metal");
  node.schematic = y["schematic"].as<std::string>("");
  auto config = ParseConfigShapeOf(where, y, *talos);
  if (!config.ok()) return config.status();
  node.config = *config;
  auto rules = ParseImageVerification(where, YamlChild(y, "image_verification"), *talos);
  if (!rules.ok()) return rules.status();
  node.image_verification = *std::move(rules);
  for (const auto& kv : YamlChild(y, "labels")) {
    node.labels.emplace_back(kv.first.as<std::string>(), kv.second.as<std::string>());
  }
  for (const auto& f : YamlChild(y, "faults")) {
    auto fault = ParseFault(where, f);
    if (!fault.ok()) return fault.status();
    node.faults.push_back(*fault);
  }
  return node;
}

KubeLabels ParseLabels(const YAML::Node& y) {
  KubeLabels out;
  if (!y.IsMap()) return out;
  for (const auto& kv : y)
    out.emplace_back(kv.first.as<std::string>(), kv.second.as<std::string>());
  return out;
}

// `owner:` (absent: ReplicaSet, or none for `replicated: false`) and `owner_name:`.
absl::Status ParsePodOwner(const std::string& where, const YAML::Node& p, PodSpec& pod) {
  pod.owner = p["replicated"].as<bool>(true) ? PodOwner::kReplicaSet : PodOwner::kNone;
  if (p["owner"]) {
    const std::string owner = p["owner"].as<std::string>("");
    bool known = false;
    for (PodOwner o : {PodOwner::kReplicaSet, PodOwner::kStatefulSet, PodOwner::kDaemonSet,
                       PodOwner::kNone}) {
      if (PodOwnerName(o) == owner) {
        pod.owner = o;
        known = true;
      }
    }
    if (!known) {
      return Invalid(where, fmt::format("owner must be ReplicaSet, StatefulSet, DaemonSet or "
                                        "none, not \"{}\"",
                                        owner));
    }
  }
  const auto dash = pod.name.rfind('-');
  pod.owner_name = p["owner_name"].as<std::string>(
      dash == std::string::npos || dash == 0 ? pod.name : pod.name.substr(0, dash));
  return absl::OkStatus();
}

// `volumes:` of a pod: each a name and one of empty_dir, host_path, claim.
absl::Status ParsePodVolumes(const std::string& where, const YAML::Node& y, PodSpec& pod) {
  for (const auto& v : y) {
    PodVolumeSpec volume;
    volume.name = v["name"].as<std::string>("");
    volume.empty_dir = v["empty_dir"].as<bool>(false);
    volume.host_path = v["host_path"].as<std::string>("");
    volume.claim = v["claim"].as<std::string>("");
    const int kinds =
        (volume.empty_dir ? 1 : 0) + (volume.host_path.empty() ? 0 : 1) + (volume.claim.empty() ? 0 : 1);
    if (volume.name.empty() || kinds != 1) {
      return Invalid(where, "a volume needs a name and exactly one of empty_dir, host_path, claim");
    }
    pod.volumes.push_back(std::move(volume));
  }
  return absl::OkStatus();
}

absl::StatusOr<PodSpec> ParsePod(const ClusterSpec& cluster, const YAML::Node& p) {
  PodSpec pod;
  pod.name = p["name"].as<std::string>("");
  pod.namespace_name = p["namespace"].as<std::string>("default");
  pod.node = p["node"].as<std::string>("");
  pod.labels = ParseLabels(YamlChild(p, "labels"));
  const std::string where = fmt::format("cluster {} pod {}", cluster.name, pod.name);
  bool node_known = false;
  for (const auto& n : cluster.nodes) node_known |= n.name == pod.node;
  if (pod.name.empty() || !node_known) {
    return Invalid(where, "a pod needs a name and the name of a node of its cluster");
  }
  if (auto st = ParsePodOwner(where, p, pod); !st.ok()) return st;
  pod.ready = p["ready"].as<bool>(true);
  pod.node_selector = ParseLabels(YamlChild(p, "node_selector"));
  pod.anti_affinity = ParseLabels(YamlChild(p, "anti_affinity"));
  if (const YAML::Node spread = YamlChild(p, "spread"); spread) {
    TopologySpreadSpec s;
    s.max_skew = spread["max_skew"].as<int>(1);
    s.labels = ParseLabels(YamlChild(spread, "labels"));
    if (s.max_skew < 1 || s.labels.empty()) {
      return Invalid(where, "spread needs max_skew of at least 1 and labels");
    }
    pod.spread = std::move(s);
  }
  if (auto st = ParsePodVolumes(where, YamlChild(p, "volumes"), pod); !st.ok()) return st;
  return pod;
}

// An int or "50%" (min_available, max_unavailable of a pdb).
std::optional<IntOrPercent> ParseIntOrPercent(const YAML::Node& y) {
  if (!y) return std::nullopt;
  std::string text = y.as<std::string>("");
  IntOrPercent v;
  if (text.ends_with('%')) {
    v.percent = true;
    text.pop_back();
  }
  if (text.empty() || !core::IsDigits(text)) return IntOrPercent{.value = -1, .percent = false};
  std::from_chars(text.data(), text.data() + text.size(), v.value);
  return v;
}

absl::Status ParseStorage(const YAML::Node& y, ClusterSpec& cluster) {
  for (const auto& c : YamlChild(y, "storage_classes")) {
    StorageClassSpec sc;
    sc.name = c["name"].as<std::string>("");
    sc.provisioner = c["provisioner"].as<std::string>(sc.provisioner);
    const std::string mode = c["binding_mode"].as<std::string>("Immediate");
    sc.wait_for_first_consumer = mode == "WaitForFirstConsumer";
    if (sc.name.empty() || (mode != "Immediate" && !sc.wait_for_first_consumer)) {
      return Invalid(fmt::format("cluster {} storage class {}", cluster.name, sc.name),
                     "a storage class needs a name; binding_mode is Immediate or "
                     "WaitForFirstConsumer");
    }
    cluster.storage_classes.push_back(std::move(sc));
  }
  for (const auto& v : YamlChild(y, "persistent_volumes")) {
    PersistentVolumeSpec pv;
    pv.name = v["name"].as<std::string>("");
    pv.node = v["node"].as<std::string>("");
    pv.storage_class = v["storage_class"].as<std::string>("");
    pv.host_path = v["host_path"].as<std::string>("");
    const std::string claim = v["claim"].as<std::string>("");
    const auto slash = claim.find('/');
    pv.claim_namespace = slash == std::string::npos ? "default" : claim.substr(0, slash);
    pv.claim_name = slash == std::string::npos ? claim : claim.substr(slash + 1);
    bool node_known = pv.node.empty();
    for (const auto& n : cluster.nodes) node_known |= n.name == pv.node;
    if (pv.name.empty() || pv.claim_name.empty() || !node_known) {
      return Invalid(fmt::format("cluster {} persistent volume {}", cluster.name, pv.name),
                     "a persistent volume needs a name, a claim <namespace>/<name> and (if "
                     "given) a node of its cluster");
    }
    cluster.persistent_volumes.push_back(std::move(pv));
  }
  return absl::OkStatus();
}

// `deny_reads: true` (every deniable resource) or a list of resources.
absl::Status ParseDenyReads(const YAML::Node& y, ClusterSpec& cluster) {
  if (!y) return absl::OkStatus();
  if (y.IsScalar()) {
    if (y.as<bool>(false)) {
      for (auto r : kDeniableResources) cluster.deny_reads.emplace(r);
    }
    return absl::OkStatus();
  }
  for (const auto& r : y) {
    const std::string name = r.as<std::string>("");
    bool known = false;
    for (auto d : kDeniableResources) known |= d == name;
    if (!known) {
      return Invalid(fmt::format("cluster {} deny_reads", cluster.name),
                     fmt::format("\"{}\" is not one of pods, poddisruptionbudgets, "
                                 "persistentvolumes, persistentvolumeclaims, storageclasses, "
                                 "replicasets, statefulsets",
                                 name));
    }
    cluster.deny_reads.insert(name);
  }
  return absl::OkStatus();
}

absl::Status ParseWorkloads(const YAML::Node& y, ClusterSpec& cluster) {
  if (auto st = ParseStorage(y, cluster); !st.ok()) return st;
  if (auto st = ParseDenyReads(YamlChild(y, "deny_reads"), cluster); !st.ok()) return st;
  for (const auto& p : YamlChild(y, "pods")) {
    auto pod = ParsePod(cluster, p);
    if (!pod.ok()) return pod.status();
    for (const auto& v : pod->volumes) {
      bool bound = v.claim.empty();
      for (const auto& pv : cluster.persistent_volumes) {
        bound |= pv.claim_namespace == pod->namespace_name && pv.claim_name == v.claim;
      }
      if (!bound) {
        return Invalid(fmt::format("cluster {} pod {}", cluster.name, pod->name),
                       fmt::format("claim {} is not the claim of a persistent_volumes entry in "
                                   "namespace {}",
                                   v.claim, pod->namespace_name));
      }
    }
    cluster.pods.push_back(*std::move(pod));
  }
  for (const auto& p : YamlChild(y, "pdbs")) {
    PdbSpec pdb;
    pdb.name = p["name"].as<std::string>("");
    pdb.namespace_name = p["namespace"].as<std::string>("default");
    pdb.match_labels = ParseLabels(YamlChild(p, "selector"));
    pdb.min_available = ParseIntOrPercent(YamlChild(p, "min_available"));
    pdb.max_unavailable = ParseIntOrPercent(YamlChild(p, "max_unavailable"));
    const bool negative = (pdb.min_available && pdb.min_available->value < 0) ||
                          (pdb.max_unavailable && pdb.max_unavailable->value < 0);
    if (pdb.name.empty() || pdb.min_available.has_value() == pdb.max_unavailable.has_value() ||
        negative) {
      return Invalid(fmt::format("cluster {} pdb {}", cluster.name, pdb.name),
                     "a pdb needs a name and exactly one of min_available, max_unavailable (an "
                     "int or a percentage such as \"50%\")");
    }
    cluster.pdbs.push_back(std::move(pdb));
  }
  return absl::OkStatus();
}

absl::StatusOr<ClusterSpec> ParseCluster(const YAML::Node& y) {
  ClusterSpec cluster;
  cluster.name = y["name"].as<std::string>("");
  if (cluster.name.empty() || cluster.name.find('/') != std::string::npos) {
    return Invalid("clusters", "every cluster needs a name without '/'");
  }
  cluster.kube_api_port = y["kube_api_port"].as<int>(6443);
  bool has_control_plane = false;
  for (const auto& n : YamlChild(y, "nodes")) {
    auto node = ParseNode(cluster.name, n);
    if (!node.ok()) return node.status();
    has_control_plane |= node->role == NodeRole::kControlPlane;
    cluster.nodes.push_back(std::move(*node));
  }
  if (!has_control_plane) {
    return Invalid(fmt::format("cluster {}", cluster.name), "needs at least one control plane");
  }
  if (auto st = ParseWorkloads(y, cluster); !st.ok()) return st;
  return cluster;
}

absl::Status ParseTimings(const YAML::Node& y, Timings& t) {
  const std::pair<const char*, std::chrono::milliseconds*> fields[] = {
      {"image_pull", &t.image_pull}, {"install", &t.install},
      {"drain", &t.drain},           {"stop", &t.stop},
      {"reboot", &t.reboot},         {"boot", &t.boot},
      {"pod_start", &t.pod_start},   {"apid_reconnect", &t.apid_reconnect},
      {"apid_hang", &t.apid_hang}};
  for (const auto& [key, field] : fields) {
    if (!YamlChild(y, key)) continue;
    auto d = ParseDuration(fmt::format("timings.{}", key), YamlChild(y, key).as<std::string>());
    if (!d.ok()) return d.status();
    *field = *d;
  }
  return absl::OkStatus();
}

absl::Status ParseRegistry(const YAML::Node& y, RegistrySpec& registry) {
  if (!y) return absl::OkStatus();
  if (!y.IsMap()) return Invalid("registry", "must be a mapping with images and schematics");
  for (const auto& image : YamlChild(y, "images")) {
    registry.images.push_back(image.as<std::string>());
    if (!ParseImageRef(registry.images.back()).ok()) {
      return Invalid("registry.images",
                     fmt::format("bad reference \"{}\"", registry.images.back()));
    }
  }
  for (const auto& id : YamlChild(y, "schematics")) registry.schematics.push_back(id.as<std::string>());
  return absl::OkStatus();
}

absl::Status ParseFactory(const YAML::Node& y, FactorySpec& factory) {
  if (!y) return absl::OkStatus();
  if (!y.IsMap()) return Invalid("factory", "must be a mapping with versions and extensions");
  for (const auto& v : YamlChild(y, "versions")) {
    std::string tag = v.as<std::string>();
    if (!tag.starts_with("v")) tag = "v" + tag;
    if (!core::ParseTalosVersion(tag).ok()) {
      return Invalid("factory.versions", fmt::format("bad Talos version \"{}\"", tag));
    }
    factory.versions.push_back(tag);
  }
  for (const auto& e : YamlChild(y, "extensions")) {
    FactoryExtensionSpec ext;
    ext.name = e.IsMap() ? YamlChild(e, "name").as<std::string>("") : "";
    if (ext.name.find('/') == std::string::npos) {
      return Invalid("factory.extensions", "each needs a name such as siderolabs/iscsi-tools");
    }
    for (const auto& v : YamlChild(e, "versions")) {
      std::string tag = v.as<std::string>();
      ext.versions.push_back(tag.starts_with("v") ? tag : "v" + tag);
    }
    factory.extensions.push_back(std::move(ext));
  }
  return absl::OkStatus();
}

absl::Status ValidateFleet(const FleetSpec& spec) {
  std::set<std::string> names;
  std::set<std::string> addresses;
  for (const auto& cluster : spec.clusters) {
    for (const auto& node : cluster.nodes) {
      if (!names.insert(node.name).second) {
        return Invalid(fmt::format("node {}", node.name), "node names must be unique in the fleet");
      }
      if (!node.address.empty() && !addresses.insert(node.address).second) {
        return Invalid(fmt::format("node {}", node.name),
                       fmt::format("address {} used twice", node.address));
      }
    }
  }
  if (spec.clusters.empty()) return Invalid("clusters", "at least one cluster is needed");
  if (!(spec.time_scale > 0)) return Invalid("time_scale", "must be positive");
  const std::string& p = spec.address_prefix;
  if (!p.empty() && p != "auto" && !IsLoopbackIpv4(p + ".1")) {
    return Invalid("address_prefix", fmt::format("\"{}\" is not three octets in 127.0.0.0/8", p));
  }
  return absl::OkStatus();
}

absl::StatusOr<FleetSpec> ParseYaml(const YAML::Node& root) {
  FleetSpec spec;
  if (!root.IsMap()) return Invalid("document", "must be a mapping with a clusters list");
  spec.time_scale = root["time_scale"].as<double>(1.0);
  spec.address_prefix = root["address_prefix"].as<std::string>("");
  if (spec.address_prefix == "auto") spec.address_prefix.clear();
  spec.refuse_connections_while_down = root["refuse_connections_while_down"].as<bool>(false);
  if (auto st = ParseTimings(YamlChild(root, "timings"), spec.timings); !st.ok()) return st;
  if (auto st = ParseRegistry(YamlChild(root, "registry"), spec.registry); !st.ok()) return st;
  if (auto st = ParseFactory(YamlChild(root, "factory"), spec.factory); !st.ok()) return st;
  for (const auto& c : YamlChild(root, "clusters")) {
    auto cluster = ParseCluster(c);
    if (!cluster.ok()) return cluster.status();
    spec.clusters.push_back(std::move(*cluster));
  }
  if (auto st = ValidateFleet(spec); !st.ok()) return st;
  return spec;
}

}  // namespace

std::string_view ConfigShapeName(ConfigShape shape) {
  switch (shape) {
    case ConfigShape::kGenerated:
      return "generated";
    case ConfigShape::kV1Alpha1:
      return "v1alpha1";
    case ConfigShape::kMigrated:
      return "migrated";
    case ConfigShape::kPartlyMigrated:
      return "partly_migrated";
  }
  return "generated";
}

absl::StatusOr<ConfigShape> ParseConfigShape(std::string_view name) {
  for (ConfigShape s : {ConfigShape::kGenerated, ConfigShape::kV1Alpha1, ConfigShape::kMigrated,
                        ConfigShape::kPartlyMigrated}) {
    if (ConfigShapeName(s) == name) return s;
  }
  return absl::InvalidArgumentError(fmt::format(
      "config must be generated, v1alpha1, migrated or partly_migrated, not \"{}\"", name));
}

std::string_view PodOwnerName(PodOwner owner) {
  switch (owner) {
    case PodOwner::kReplicaSet:
      return "ReplicaSet";
    case PodOwner::kStatefulSet:
      return "StatefulSet";
    case PodOwner::kDaemonSet:
      return "DaemonSet";
    case PodOwner::kNone:
      return "none";
  }
  return "none";
}

std::string_view NodeRoleName(NodeRole role) {
  return role == NodeRole::kControlPlane ? "controlplane" : "worker";
}

std::string_view FaultKindName(FaultKind kind) {
  for (const auto& [k, name] : kFaultNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

absl::StatusOr<FaultKind> ParseFaultKind(std::string_view name) {
  for (const auto& [k, n] : kFaultNames) {
    if (n == name) return k;
  }
  return absl::InvalidArgumentError(fmt::format("unknown fault kind \"{}\"", name));
}

absl::StatusOr<FleetSpec> FleetSpec::Parse(std::string_view yaml) {
  try {
    return ParseYaml(YAML::Load(std::string(yaml)));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("fleet file: {}", e.what()));
  }
}

absl::StatusOr<FleetSpec> FleetSpec::Load(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(fmt::format("cannot read fleet file {}", path.string()));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return Parse(buffer.str());
}

const NodeSpec* FleetSpec::FindNode(std::string_view name) const {
  for (const auto& cluster : clusters) {
    for (const auto& node : cluster.nodes) {
      if (node.name == name) return &node;
    }
  }
  return nullptr;
}

}  // namespace tr::sim
