// The fleet file of talos-sim: which clusters and nodes to simulate, how long the simulated
// operations take, which faults to script, and how to allocate loopback addresses.
//
// A FleetSpec is a plain value parsed from YAML (see docs/talos-sim.md, "Fleet file", for the
// file format). Parsing validates everything the simulator later relies on (unique node names,
// valid Talos and Kubernetes versions, at least one control plane per cluster, addresses inside
// 127.0.0.0/8), so Fleet::Start only fails on environment problems. Values only;
// thread-compatible.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::sim {

enum class NodeRole { kControlPlane, kWorker };

// "controlplane" / "worker", the words Talos uses for machine.type.
std::string_view NodeRoleName(NodeRole role);

// Faults a node can be given, in the fleet file (`faults:` of a node) or at run time
// (Fleet::InjectFault, the control endpoint).
enum class FaultKind {
  kBadInstallerImage,  // image validation / pull fails ("error validating installer image ...")
  kBootFailure,  // a boot while the A/B fallback is armed (after an install, until Running and
                 // Ready) hits a fatal error: machined reverts to the old slot and reboots
  kNeverReturns,       // the next reboot never comes back (until the fault is cleared)
  kSlowReboot,         // every reboot stays down `delay` longer
  kEtcdUnhealthy,      // this node's etcd member fails its health check
  kUpgradeLockHeld,    // Upgrade on this node finds the etcd upgrade mutex held by another session
  kApiUnreachable,     // the node's API answers nothing but Unavailable; the machine keeps running
  // Kubernetes upgrade faults (kube_upgrade_model.cc):
  kImagePullFailure,     // pulls of images containing `image` (empty = every image) fail: not found
  kStaticPodNotReady,    // a static pod restarted by a config change never becomes Ready again
                         // (`image`: only the component containing this text; empty = all)
  kKubeletNotReturning,  // a kubelet restarted by a config change never comes back; Node NotReady
  kRemovedApiInUse,      // the cluster's API server still holds objects of an API the next
                     // Kubernetes minor removes (podschedulingcontexts.v1alpha3.resource.k8s.io)
  kRebootAfterPull,  // right after answering a pull (ImageService/Pull, ImagePull) of an image
                     // containing `image` (empty = any), the node reboots at once (a power blip)
  kEphemeralWiped,   // at its next boot the node's EPHEMERAL partition is empty: the CRI
                     // containerd's images are gone too (only the image stores are modelled)
  kNeverReady,       // a boot with the fallback armed reaches RUNNING but never Ready (the
                     // kubelet's Node stays NotReady): no revert, the fallback stays armed
  kPowerCycle,       // `delay` after it is added the machine loses power and boots again (no API
                     // call, no reboot sequence), into the slot an install made the next boot;
                     // `count` times (absent = once), `delay` apart
};

// The fleet-file spelling: "bad_installer_image", "boot_failure", "never_returns", "slow_reboot",
// "etcd_unhealthy", "upgrade_lock_held", "api_unreachable", "image_pull_failure",
// "static_pod_not_ready", "kubelet_not_returning", "removed_api_in_use", "reboot_after_pull",
// "ephemeral_wiped", "never_ready", "power_cycle".
std::string_view FaultKindName(FaultKind kind);
absl::StatusOr<FaultKind> ParseFaultKind(std::string_view name);

// How a node's configuration keeps its Kubernetes components (fleet file `config:`).
enum class ConfigShape {
  kGenerated,       // as `talosctl gen config` of the node's Talos version writes it
  kV1Alpha1,        // every component in its v1alpha1 section (made before 1.14)
  kMigrated,        // every component in its own document, the rest as made before 1.14
  kPartlyMigrated,  // the kubelet in KubeletConfig, the control plane in v1alpha1
};

// "generated", "v1alpha1", "migrated", "partly_migrated".
std::string_view ConfigShapeName(ConfigShape shape);
absl::StatusOr<ConfigShape> ParseConfigShape(std::string_view name);

struct Fault {
  FaultKind kind = FaultKind::kBootFailure;
  // How many times the fault fires before it is used up; -1 = until cleared. Only the one-shot
  // kinds count down (boot_failure, never_returns, bad_installer_image, upgrade_lock_held: each
  // refused or failed attempt is one; reboot_after_pull: each reboot; ephemeral_wiped,
  // never_ready: each boot it hits; power_cycle: each power cut, once when absent); the others
  // are conditions that hold until cleared.
  int count = -1;
  // slow_reboot: extra time down per reboot; power_cycle: time from being added to the power
  // cut, and between cuts. Fleet time (multiplied by the time scale).
  std::chrono::milliseconds delay{0};
  // bad_installer_image, reboot_after_pull: only images containing this text; empty = every
  // image.
  std::string image;
};

// How long simulated operations take, in fleet time. The simulator multiplies every value by the
// time scale (FleetSpec::time_scale, overridable at start), so the same fleet file serves a demo
// (scale 0.1: an upgrade in a few seconds) and tests (scale 0.001: tens of milliseconds).
struct Timings {
  std::chrono::milliseconds image_pull{4000};  // pull + validate an installer or system image
  std::chrono::milliseconds install{8000};     // the installer writing the inactive slot
  std::chrono::milliseconds drain{2000};       // cordon and drain inside the legacy upgrade
  std::chrono::milliseconds stop{1000};        // the reboot sequence stopping pods, then services
  std::chrono::milliseconds reboot{10000};     // API down between RestartEvent and boot
  std::chrono::milliseconds boot{6000};        // API up (BOOTING) until RUNNING and ready
  std::chrono::milliseconds pod_start{2000};   // an evicted pod's replacement becoming Ready
  // After a node boots, how long the apid of another node keeps failing calls it forwards there
  // (its gRPC connection is still in reconnect backoff: up to 15 s in Talos). 0 = none.
  std::chrono::milliseconds apid_reconnect{0};
  // After a node boots, how long calls another node's apid forwards there hang: accepted, never
  // answered, until the window ends (then Unavailable `i/o timeout`, as apid's connection
  // attempt reaching its 20 s connect timeout) or the caller's deadline passes. Counted from the
  // boot, like apid_reconnect, and checked first. 0 = none.
  std::chrono::milliseconds apid_hang{0};
};

// The registry catalogue (see image_registry.h for the images that exist without being listed).
struct RegistrySpec {
  std::vector<std::string> images;      // extra image references that exist
  std::vector<std::string> schematics;  // extra Image Factory schematic ids that exist
};

// One official extension of the simulated Image Factory (image_factory.h).
struct FactoryExtensionSpec {
  std::string name;                   // "siderolabs/iscsi-tools"
  std::vector<std::string> versions;  // Talos tags it is published for; empty = every version
};

// The simulated Image Factory: which Talos releases it builds and which official extensions it
// offers. Empty lists take the defaults (image_factory.h).
struct FactorySpec {
  std::vector<std::string> versions;             // "v1.14.0"; empty = the defaults
  std::vector<FactoryExtensionSpec> extensions;  // empty = the default set
};

// One rule of a node's ImageVerificationConfig (fleet file `image_verification:`, Talos 1.13+):
// the first rule whose `image` glob matches an image's repository decides; `deny` refuses the
// pull, `skip` allows it (image_verification.h).
struct ImageVerificationRuleSpec {
  std::string image;  // "factory.talos.dev/*"
  bool deny = false;
  bool skip = false;
};

// Kubernetes labels (or an equality selector's matchLabels) in fleet-file order.
using KubeLabels = std::vector<std::pair<std::string, std::string>>;

struct NodeSpec {
  std::string name;  // hostname; unique in the whole fleet
  NodeRole role = NodeRole::kWorker;
  std::string talos_version;       // "v1.11.6" (with or without the leading v)
  std::string kubernetes_version;  // "1.34.1" (with or without the leading v)
  std::string address;             // "127.0.42.7"; empty = allocated from the fleet's prefix
  std::string platform = "metal";  // Version.platform.name
  std::string schematic;           // 64-hex schematic id of the installed image; empty = vanilla
  std::vector<Fault> faults;       // active from the start
  ConfigShape config = ConfigShape::kGenerated;  // fleet file `config:`
  std::vector<ImageVerificationRuleSpec> image_verification;  // rendered into its config
  KubeLabels labels;  // extra labels of its Kubernetes Node (fleet file `labels:`)
};

// The controller of a fleet-file pod (fleet file `owner:`): what its ownerReferences name and
// what an eviction does to it (the ReplicaSet controller replaces it under a new name, the
// StatefulSet controller under the same name, a DaemonSet's pod is left alone by a drain, a pod
// without a controller is gone for good).
enum class PodOwner { kReplicaSet, kStatefulSet, kDaemonSet, kNone };

// "ReplicaSet", "StatefulSet", "DaemonSet", "none" (the fleet-file spelling; also the kind).
std::string_view PodOwnerName(PodOwner owner);

// One entry of a pod's `volumes:`: exactly one of empty_dir, host_path, claim.
struct PodVolumeSpec {
  std::string name;
  bool empty_dir = false;
  std::string host_path;  // hostPath.path
  std::string claim;      // persistentVolumeClaim.claimName (a claim of the pod's namespace)
};

// A pod's `spread:`: one topologySpreadConstraint over kubernetes.io/hostname, DoNotSchedule.
struct TopologySpreadSpec {
  int max_skew = 1;
  KubeLabels labels;  // its labelSelector's matchLabels
};

// A workload pod on the simulated Kubernetes API (static pods and kube-proxy are generated).
struct PodSpec {
  std::string name;
  std::string namespace_name = "default";
  std::string node;  // node name it runs on
  KubeLabels labels;
  PodOwner owner = PodOwner::kReplicaSet;  // `owner:`; `replicated: false` means kNone
  std::string owner_name;  // the controller's name; default: `name` without its last -suffix
  bool ready = true;       // false: never Ready (nor its replacements), unhealthy for budgets
  KubeLabels node_selector;  // spec.nodeSelector
  KubeLabels anti_affinity;  // required pod anti-affinity (matchLabels) over kubernetes.io/hostname
  std::optional<TopologySpreadSpec> spread;
  std::vector<PodVolumeSpec> volumes;
};

// An int or a percentage of a PodDisruptionBudget ("50%": value 50, percent).
struct IntOrPercent {
  int value = 0;
  bool percent = false;
};

// A PodDisruptionBudget (policy/v1) over pods of one namespace, by equality label selector.
struct PdbSpec {
  std::string name;
  std::string namespace_name = "default";
  KubeLabels match_labels;
  std::optional<IntOrPercent> min_available;
  std::optional<IntOrPercent> max_unavailable;
};

// A PersistentVolume bound to a claim (fleet file `persistent_volumes:`); the claim is served as
// a bound PersistentVolumeClaim.
struct PersistentVolumeSpec {
  std::string name;
  std::string node;  // a local PV on this node (spec.local + nodeAffinity); empty: not local
  std::string storage_class;
  std::string claim_namespace = "default";  // `claim: <namespace>/<name>`
  std::string claim_name;
  std::string host_path;  // spec.local.path of a local PV, spec.hostPath of another
};

struct StorageClassSpec {
  std::string name;
  std::string provisioner = "kubernetes.io/no-provisioner";
  bool wait_for_first_consumer = false;  // `binding_mode: WaitForFirstConsumer` (else Immediate)
};

struct ClusterSpec {
  std::string name;
  std::vector<NodeSpec> nodes;
  std::vector<PodSpec> pods;
  std::vector<PdbSpec> pdbs;
  std::vector<PersistentVolumeSpec> persistent_volumes;
  std::vector<StorageClassSpec> storage_classes;
  // Resources whose list endpoints answer 403 Forbidden (`deny_reads: true` = all of
  // kDeniableResources; or a list of them).
  std::set<std::string> deny_reads;
  int kube_api_port = 6443;  // the fake Kubernetes API listens on the first control plane's address
};

// What `deny_reads:` can name: the lists a disruption forecast reads.
inline constexpr std::string_view kDeniableResources[] = {
    "pods",        "poddisruptionbudgets", "persistentvolumes", "persistentvolumeclaims",
    "storageclasses", "replicasets",       "statefulsets"};

struct FleetSpec {
  std::vector<ClusterSpec> clusters;
  Timings timings;
  RegistrySpec registry;
  FactorySpec factory;
  double time_scale = 1.0;
  // First three octets of node addresses, e.g. "127.0.42"; nodes without an explicit address get
  // .1, .2, ... in fleet-file order. Empty or "auto": derived from the process id, and moved on to
  // another prefix when an address is already in use (parallel test processes).
  std::string address_prefix;
  // While a node is down (rebooting, never_returns, api_unreachable) its listener is closed and
  // connections are refused, as with a real machine; false: the listener stays and answers
  // UNAVAILABLE.
  bool refuse_connections_while_down = false;

  // Parses fleet YAML. InvalidArgument naming the offending key or node on any error.
  static absl::StatusOr<FleetSpec> Parse(std::string_view yaml);
  // Reads and parses a file. NotFound when it cannot be read, else as Parse.
  static absl::StatusOr<FleetSpec> Load(const std::filesystem::path& path);

  // The node of that name, or nullptr.
  const NodeSpec* FindNode(std::string_view name) const;
};

}  // namespace tr::sim
