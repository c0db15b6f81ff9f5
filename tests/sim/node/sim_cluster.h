// The simulated machines of one cluster and everything they share: etcd membership and
// leadership, the Kubernetes objects the fake API serves, and the one lock that guards it all.
// This is the state machine of talos-sim; the gRPC services, the fake Kubernetes API and the
// control endpoint are thin layers over it.
//
// Time only moves through the injected Scheduler: sequences (upgrade, reboot, boot) are chains of
// scheduled steps, so a ManualScheduler drives them deterministically in tests. Every state change
// is journaled and wakes the waiters on cv().
//
// Thread-safety: public methods lock mu() themselves. Methods ending in `Locked` and the node
// fields require the caller to hold mu(). Results that take simulated time come back through a
// Mailbox, filled from the scheduler's thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/version.h"
#include "nlohmann/json.hpp"
#include "tests/sim/catalog/fleet_spec.h"
#include "tests/sim/common/journal.h"
#include "tests/sim/common/scheduler.h"
#include "tests/sim/node/node_snapshot.h"
#include "tests/sim/catalog/image_registry.h"
#include "tests/sim/common/mailbox.h"

namespace tr::sim {

// The CoreDNS image of the bootstrap manifests (Talos renders cluster.coreDNS.image, by default
// the one its release was built with; the simulator keeps one).
inline constexpr const char* kDefaultCoreDnsImage = "registry.k8s.io/coredns/coredns:v1.12.4";

using WallTime = std::chrono::system_clock::time_point;

// One event in a node's Events buffer.
struct NodeEvent {
  uint64_t seq = 0;  // 1, 2, ... since the last boot
  std::string id;    // xid
  std::string actor_id;
  WallTime time;
  std::string type_url;  // "talos/runtime/machine.SequenceEvent"
  std::string value;     // serialized payload message
};

struct CosiResource {
  std::string ns, type, id;
  uint64_t version = 1;
  std::string proto_spec;
  std::string yaml_spec;
  WallTime created, updated;
};

// One entry of a node's resource change log (cosi EventType numbers).
struct CosiChange {
  enum Type { kCreated = 0, kUpdated = 1, kDestroyed = 2 };
  uint64_t seq = 0;
  Type type = kCreated;
  CosiResource resource;
  std::optional<CosiResource> old;
};

struct ServiceRecord {
  std::string state = "Running";  // Running, Starting, Waiting, Stopping, Finished, Failed
  bool healthy = true;
  bool unknown = false;
  std::string message = "Health check successful";
  WallTime since;
};

// Pods the fake Kubernetes API serves.
struct KubePod {
  std::string ns, name, node, uid;
  std::map<std::string, std::string> labels, annotations;
  std::string owner_kind;  // "ReplicaSet", "StatefulSet", "DaemonSet", "Node" (mirror pod) or ""
  std::string owner_name;  // a fleet-file pod's controller (PodSpec::owner_name)
  const PodSpec* fleet = nullptr;  // the fleet-file entry it is (or replaces); else nullptr
  std::string avoid_node;  // a replacement stays off its predecessor's node until that node
                           // is uncordoned or Ready again
  std::string container, image;
  bool ready = true;
  uint64_t resource_version = 1;
  WallTime created;
};

struct SimNode {
  NodeSpec spec;
  std::string address;

  // Machine.
  bool up = false;
  bool stuck_down = false;  // rebooted under never_returns
  uint64_t generation = 0;  // +1 whenever the node goes down: streams of older ones end
  uint64_t epoch = 0;       // +1 when a sequence is cancelled: its pending steps do nothing
  MachineStage stage = MachineStage::kUnknown;
  bool ready = false;
  std::vector<std::string> unmet;
  std::string sequence;  // running sequence, "" when idle
  std::string tag;       // running Talos tag
  std::string kubelet_version;
  std::string boot_id;
  int boots = 0;
  int active_slot = 0;                // 0 = A, 1 = B
  std::string slots[2];               // Talos tag per slot
  std::string slot_images[2];         // the installer image each slot was written from
  std::string image;                  // the installer image of the running slot
  std::optional<int> next_boot_slot;  // armed by an install or Rollback
  // The slot the bootloader boots next (grub's default entry, sd-boot's LoaderEntryDefault): an
  // install writes the other one, a Rollback flips to the other one.
  int default_slot() const { return next_boot_slot.value_or(active_slot); }
  // META "upgrade" tag: the slot a fatal boot error reverts to. The installer sets it; machined
  // drops it once the machine is Running and Ready (talos DropUpgradeFallbackController).
  std::optional<int> fallback_slot;
  bool installing = false;            // LifecycleService/Upgrade in progress
  bool talos_cordoned = false;        // the legacy upgrade's drain cordoned it
  bool kexec_prepared{};              // a kexec phase loaded the next kernel (reboot kexecs)
  std::vector<Fault> faults;
  std::map<std::string, ServiceRecord> services;

  // Configuration (images follow the machine config).
  std::string machine_config;
  std::string staged_config;
  int config_version = 1;
  std::map<std::string, std::string> images;  // "kubelet", "kube-apiserver", ... -> image
  // Pulled images per containerd store, under every name a pull stores (image_registry.h).
  std::map<ImageStore, std::set<std::string>> image_store;
  // After a boot, apid on other nodes forwards here only from this time (reconnect backoff).
  Scheduler::TimePoint forwardable_from{};
  // Until then, calls forwarded here hang (apid's connection attempt has not timed out yet).
  Scheduler::TimePoint forward_hangs_until{};
  int hanging_calls = 0;  // forwarded calls waiting in that window now

  // etcd (control planes).
  uint64_t etcd_member_id = 0;

  // Events and COSI resources (cleared at every boot).
  std::deque<NodeEvent> events;
  uint64_t next_event_seq = 1;
  // The buffer as it was when the node last went down (generation `last_life_generation`), so
  // open streams still deliver the events up to the RestartEvent before they end.
  std::deque<NodeEvent> last_life_events;
  std::deque<CosiChange> last_life_cosi_log;
  uint64_t last_life_generation = 0;
  std::map<std::string, CosiResource> resources;  // key: ns/type/id
  std::deque<CosiChange> cosi_log;
  uint64_t next_cosi_seq = 1;

  // Kubernetes Node.
  bool kube_ready = false;
  bool unschedulable = false;
  uint64_t kube_resource_version = 1;
  std::map<std::string, std::string> kube_labels, kube_annotations;
  WallTime kube_created;

  bool is_control_plane() const { return spec.role == NodeRole::kControlPlane; }
  bool api_reachable() const;
  bool HasFault(FaultKind kind) const;
};

// The running Talos minor of a node (e.g. 13 for v1.13.2).
int TalosMinor(const SimNode& node);

// MachineService/Reboot's RebootRequest.Mode (same numbers).
enum class SimRebootMode { kDefault = 0, kPowercycle = 1, kForce = 2 };

struct LegacyUpgradeParams {
  std::string image;
  bool preserve = false;
  bool stage = false;
  bool force = false;
  bool powercycle = false;
};

// What a streamed install or pull reports: a message, or the end (exit code / final name).
struct ProgressItem {
  std::string message;
  bool final = false;
  int exit_code = 0;
  std::string layer;  // image pulls: layer id of a progress item
  int layer_status = 0;
  int64_t offset = 0, total = 0;
  absl::Status error;  // a gRPC error ends the stream instead of a final item

  static ProgressItem Message(std::string text) {
    ProgressItem item;
    item.message = std::move(text);
    return item;
  }
  static ProgressItem Exit(int code) {
    ProgressItem item;
    item.final = true;
    item.exit_code = code;
    return item;
  }
  static ProgressItem Name(std::string name) {
    ProgressItem item = Message(std::move(name));
    item.final = true;
    return item;
  }
  static ProgressItem Layer(std::string id, int status, int64_t offset, int64_t total) {
    ProgressItem item;
    item.layer = std::move(id);
    item.layer_status = status;
    item.offset = offset;
    item.total = total;
    return item;
  }
  static ProgressItem Error(absl::Status status) {
    ProgressItem item;
    item.error = std::move(status);
    return item;
  }
};

struct ApplyResult {
  int mode = 0;  // ApplyConfigurationRequest.Mode actually used
  std::string details;
  std::vector<std::string> warnings;
};

// Whether `preserve` skips a control plane's etcd checks on legacy Upgrade (Talos 1.12.9+,
// 1.13.4+, 1.14+); on older versions only `force` does.
bool PreserveSkipsEtcdChecks(const core::Version& version);

class SimCluster {
 public:
  SimCluster(ClusterSpec spec, const Timings& timings, double time_scale,
             std::shared_ptr<Scheduler> scheduler, Journal* journal);

  std::mutex& mu() const { return mu_; }
  std::condition_variable& cv() const { return cv_; }
  const std::string& name() const { return spec_.name; }
  Scheduler& scheduler() const { return *scheduler_; }
  std::vector<std::unique_ptr<SimNode>>& nodes() { return nodes_; }
  const ClusterSpec& spec() const { return spec_; }

  // Assigns addresses and brings every node up RUNNING and ready at once (no boot delay).
  void Boot(const std::vector<std::string>& addresses);
  // Ends every stream and cancels pending steps.
  void Stop();
  bool stopping() const { return stopping_; }

  SimNode* FindNodeLocked(std::string_view name_or_address);
  NodeSnapshot SnapshotLocked(const SimNode& node) const;
  void JournalCallLocked(const SimNode& node, std::string method, std::string role,
                         std::string code, std::string endpoint, std::string detail);
  void JournalStateLocked(const SimNode& node, std::string what, std::string detail);

  absl::Status InjectFault(SimNode& node, Fault fault);
  void ClearFaults(SimNode& node, std::optional<FaultKind> kind);

  // --- Sequences (sequences.cc) ---
  // Legacy MachineService/Upgrade: after the image pull time, the synchronous checks; the mailbox
  // gets the actor id (sequence started or LOCKED) or the error.
  std::shared_ptr<Mailbox<absl::StatusOr<std::string>>> LegacyUpgrade(SimNode& node,
                                                                      LegacyUpgradeParams p);
  // Reboot: the actor id; the reboot sequence of the node's minor and `mode` runs asynchronously.
  absl::StatusOr<std::string> Reboot(SimNode& node, SimRebootMode mode = SimRebootMode::kDefault);
  // Rollback: FailedPrecondition-like error text when there is no other slot.
  absl::Status Rollback(SimNode& node);
  // LifecycleService/Upgrade (1.13+): progress messages then exit code. It does not pull: the
  // image must already be in `store` under the name as given, else Internal "upgrade failed:
  // installer image ... not found in containerd store" (internal/app/lifecycle).
  absl::StatusOr<std::shared_ptr<Mailbox<ProgressItem>>> LifecycleUpgrade(
      SimNode& node, std::string image, ImageStore store = ImageStore::kCriSystem);
  // ImageService/Pull and legacy ImagePull into `store`: layer progress then the final name
  // (pinned to its digest), or an error (NotFound "error pulling image: ..."). An image already
  // in the store answers at once.
  std::shared_ptr<Mailbox<ProgressItem>> PullImage(SimNode& node, std::string image,
                                                   ImageStore store = ImageStore::kCriSystem);
  // ApplyConfiguration by version (config.cc).
  absl::StatusOr<ApplyResult> ApplyConfiguration(SimNode& node, const std::string& data, int mode,
                                                 bool dry_run,
                                                 std::chrono::milliseconds try_timeout);

  // --- etcd (etcd_model.cc); callers hold mu() ---
  std::vector<const SimNode*> EtcdMembersLocked() const;
  bool EtcdStartedLocked(const SimNode& node) const;
  bool EtcdHealthyLocked(const SimNode& node) const;
  uint64_t EtcdLeaderLocked() const { return etcd_leader_; }
  void ElectLeaderLocked();
  // EtcdForfeitLeadership on `node` (etcd_model.cc): the new leader's name, "" when `node` did
  // not lead; the refusals as Talos words them.
  absl::StatusOr<std::string> ForfeitEtcdLeadershipLocked(const SimNode& node);
  // The checks of a control-plane Upgrade (mutex, ValidateForUpgrade), as Talos words them.
  absl::Status ValidateEtcdForUpgradeLocked(SimNode& node, const LegacyUpgradeParams& p);
  uint64_t EtcdRaftIndexLocked() const { return raft_index_; }

  // --- Kubernetes (kube_model.cc); JSON as the API serves it; callers hold mu() ---
  nlohmann::json KubeNodeJsonLocked(const SimNode& node) const;
  nlohmann::json KubePodJsonLocked(const KubePod& pod) const;
  std::vector<KubePod>& pods() { return pods_; }
  std::map<std::string, nlohmann::json>& leases() { return leases_; }
  // A PodDisruptionBudget's status as the disruption controller computes it (expectedPods from
  // the controllers' scale for a percentage or maxUnavailable, percentages rounded up).
  struct PdbStatus {
    int current_healthy = 0, desired_healthy = 0, expected_pods = 0, disruptions_allowed = 0;
    std::string sync_error;  // the controller could not count (a DaemonSet's pod): allowed 0
  };
  PdbStatus PdbStatusLocked(const PdbSpec& pdb) const;
  nlohmann::json PdbJsonLocked(const PdbSpec& pdb) const;
  // Whether the pod is Ready as its JSON says (status.conditions Ready True).
  bool PodReadyLocked(const KubePod& pod) const;
  // The controllers of the fleet-file pods as apps/v1 objects (`plural`: "replicasets",
  // "statefulsets", "daemonsets"); spec.replicas = the fleet file's pods of that owner.
  nlohmann::json OwnerObjectsLocked(const std::string& plural) const;
  // PersistentVolumes, bound PersistentVolumeClaims and StorageClasses of the fleet file.
  nlohmann::json PersistentVolumesJsonLocked() const;
  nlohmann::json PersistentVolumeClaimsJsonLocked() const;
  nlohmann::json StorageClassesJsonLocked() const;
  // Evicts a pod honouring PodDisruptionBudgets: 201/404/429 with the Status body.
  std::pair<int, nlohmann::json> EvictLocked(const std::string& ns, const std::string& name);
  // Stores a Node as a patch left it (`patched`, KubeNodeJsonLocked with the patch applied):
  // its metadata.labels and metadata.annotations become the node's whole sets (a key the patch
  // deleted goes, the others stay), spec.unschedulable its cordon. They belong to the Node
  // object, not to the machine: no reboot or power cycle changes them.
  void UpdateNodeLocked(SimNode& node, const nlohmann::json& patched);
  std::string KubeApiVersionLocked() const;
  uint64_t NextResourceVersionLocked() { return ++resource_version_; }
  // The newest resourceVersion given out, as a list answers it (a read does not move it).
  uint64_t ResourceVersionLocked() const { return resource_version_; }

  // --- The Node watch (kube_node_watch.cc); callers hold mu() ---
  // One change of a Node as a watch sends it: "ADDED" or "MODIFIED" and the object then.
  struct KubeNodeEvent {
    uint64_t resource_version = 0;
    std::string type;
    nlohmann::json object;
    // The object this event replaced: a watch with a selector sends ADDED or DELETED when the
    // Node enters or leaves the selected set with this event (the cacher's prevObject).
    nlohmann::json previous;
  };
  // The apiserver's watch cache keeps this many events per resource type (its default
  // --default-watch-cache-size); a watch from before them is 410 Expired.
  static constexpr size_t kNodeWatchHistory = 100;
  // Brings the Node objects up to the machines: a Node whose object (its times aside) changed
  // since the last settle without a write giving it a resourceVersion gets one, and every
  // changed Node an event in the history. Lists, gets and watches of Nodes settle first.
  void SettleKubeNodesLocked();
  // The events after `resource_version`, oldest first; nullopt when the history no longer
  // reaches back that far (410 Expired).
  std::optional<std::vector<KubeNodeEvent>> KubeNodeEventsAfterLocked(
      uint64_t resource_version) const;
  // The oldest resourceVersion a watch may start from (the history reaches back to it).
  uint64_t KubeNodeHistoryStartLocked() const { return node_history_start_; }

  // --- COSI resources (cosi_model.cc); callers hold mu() ---
  // Recomputes the node's resources from its state and logs the differences.
  void RefreshResourcesLocked(SimNode& node);

  // Publishes a payload on the node's Events buffer (event_model.cc).
  void PublishLocked(SimNode& node, const std::string& type_name, const std::string& value,
                     const std::string& actor_id);

  // The admin kubeconfig the Kubeconfig call returns (set by the fleet).
  void set_kubeconfig(std::string kubeconfig) { kubeconfig_ = std::move(kubeconfig); }
  const std::string& kubeconfig() const { return kubeconfig_; }

  Scheduler::Duration Scaled(std::chrono::milliseconds d) const;
  const Timings& timings() const { return timings_; }

  // Internals shared by the .cc files of the state machine.
  void SetStageLocked(SimNode& node, MachineStage stage, bool ready,
                      std::vector<std::string> unmet);
  void SequenceEventLocked(SimNode& node, const std::string& sequence, int action,
                           const std::string& actor, int error_code = -1,
                           const std::string& error = {});
  void GoDownLocked(SimNode& node, bool kexec);
  // A power_cycle fault of the node fires after `delay` (fleet time): the machine goes down at
  // once and boots; again `delay` later while the fault has firings left.
  void SchedulePowerCycleLocked(SimNode& node, std::chrono::milliseconds delay);
  // The installer's write (legacy Upgrade or LifecycleService/Upgrade): `tag` from `image` into
  // the slot that does not boot next, made the next boot, the fallback armed to the slot that
  // was to boot next (journaled "slot").
  void InstallIntoSlotLocked(SimNode& node, const std::string& tag, const std::string& image);
  // instant: the initial boot at fleet start (no delays, no events of a boot sequence).
  void BootUpLocked(SimNode& node, bool instant = false);
  void BootedLocked(SimNode& node);
  void ReadyLocked(SimNode& node);
  void NotifyLocked() { cv_.notify_all(); }
  // Runs `step` after `delay` with mu() held, unless the node's epoch moved on.
  void AfterLocked(SimNode& node, Scheduler::Duration delay, std::function<void(SimNode&)> step);
  void SetServiceLocked(SimNode& node, const std::string& id, const std::string& state,
                        bool healthy);
  void InitKubeLocked();
  void CordonLocked(SimNode& node, bool cordon, const std::string& by);
  void DrainLocked(SimNode& node);
  // The controller's answer to a removed pod (kube_scheduling.cc): a ReplicaSet's pod comes
  // back under a new name, a StatefulSet's under the same name, both scheduled as the scheduler
  // would (or Pending); a DaemonSet's pod comes back on its node; a pod without one is gone.
  void RescheduleLocked(KubePod pod);
  // The pod of that uid becomes Ready after pod_start if it is on a node then (journaled).
  void PodStartsLocked(const std::string& uid);
  // Binds every Pending fleet pod a node can now take (Ready after pod_start).
  void SchedulePendingLocked();
  // Why `node` cannot take `pod`, in the scheduler's words ("" = it can).
  std::string UnfitReasonLocked(const KubePod& pod, const SimNode& node) const;
  // "0/4 nodes are available: ..." for a pod no node can take.
  std::string UnschedulableMessageLocked(const KubePod& pod) const;
  // --- Images (image_model.cc); callers hold mu() ---
  // The image as the registry serves it: Unknown for an unparsable reference, NotFound "failed
  // to pull image ..." when the registry has no such image (or a bad_installer_image fault).
  absl::StatusOr<ImageRef> ResolveImageLocked(SimNode& node, const std::string& image);
  // Uses one firing of the node's fault of `kind` whose `image` filter matches `image` (journaled
  // "fault"); false when it has none left.
  bool FireFaultLocked(SimNode& node, FaultKind kind, const std::string& image);
  // Whether `name` (looked up as written, like containerd's GetImage) is in the store.
  bool HasImageLocked(const SimNode& node, ImageStore store, const std::string& name) const;
  // Legacy Upgrade's pull-and-validate into the in-memory store: the installer's Talos tag.
  absl::StatusOr<std::string> ValidateInstallerLocked(SimNode& node, const std::string& image);
  // A pull of an image not yet pulled, checked against the node's ImageVerificationConfig
  // (1.13+): Unknown "verification denied by matched rule (<id>)" when a deny rule matches, in
  // go-retry's ErrorSet text when the pull ran in its retry loop (`legacy_upgrade`, or any pull
  // on 1.13; image_verification.h).
  absl::Status VerifyPullLocked(const SimNode& node, const std::string& image,
                                bool legacy_upgrade) const;
  // LifecycleService/Upgrade's installer printing `output` and exiting 1 (journaled "install"
  // "failed: <why>"); returns `box`, closed.
  std::shared_ptr<Mailbox<ProgressItem>> InstallerExitedLocked(
      SimNode& node, std::shared_ptr<Mailbox<ProgressItem>> box, const std::string& why,
      const std::string& output);
  void set_registry(std::shared_ptr<const RegistryCatalog> registry) {
    registry_ = std::move(registry);
  }
  // Runs `sequence`'s phases one after another (see sequences.cc).
  struct Phase {
    std::string name;
    std::vector<std::string> tasks{};  // upstream runs a phase's tasks side by side
    Scheduler::Duration delay{};
    std::function<void(SimNode&)> action;  // at the end of the phase, before its STOP event
  };
  void RunPhasesLocked(SimNode& node, std::vector<Phase> phases, size_t index, std::string actor);
  void StartRebootSequenceLocked(SimNode& node, const std::string& actor, SimRebootMode mode);
  // The legacy Upgrade's sequence once its checks passed (`tag`: the installer's version).
  void StartLegacyUpgradeLocked(SimNode& node, const LegacyUpgradeParams& p, const std::string& tag,
                                const std::string& actor);
  std::vector<Phase> LegacyUpgradePhasesLocked(SimNode& node, const LegacyUpgradeParams& p,
                                               const std::string& tag);
  // True (and a LOCKED SequenceEvent published) when another sequence holds the node.
  bool SequenceLockedLocked(SimNode& node, const std::string& sequence, const std::string& actor);
  std::string RenderMachineConfigLocked(const SimNode& node) const;
  // Kubernetes components following a configuration change (kube_upgrade_model.cc): the kubelet
  // service restarts with `image`; static pods whose image changed restart and become Ready.
  void RestartKubeletLocked(SimNode& node, const std::string& image);
  void RestartStaticPodsLocked(SimNode& node);
  // Whether a node of the cluster has the fault (cluster-wide faults such as removed_api_in_use).
  bool AnyNodeHasFaultLocked(FaultKind kind) const;
  // The bootstrap manifests' workloads as the API holds them (kube_upgrade_model.cc):
  // "daemonsets/kube-proxy" and "deployments/coredns" in kube-system, by their container image.
  // Setting a new kube-proxy image rolls its pods out (each restarts, Ready after pod_start).
  std::string BootstrapWorkloadImageLocked(const std::string& key) const;
  void SetBootstrapWorkloadImageLocked(const std::string& key, const std::string& image);

 private:
  ClusterSpec spec_;
  Timings timings_;
  double time_scale_;
  std::shared_ptr<Scheduler> scheduler_;
  Journal* journal_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<std::unique_ptr<SimNode>> nodes_;
  bool stopping_ = false;
  uint64_t etcd_leader_ = 0;
  uint64_t raft_index_ = 1000;
  uint64_t raft_term_ = 2;
  uint64_t resource_version_ = 1000;
  std::vector<KubePod> pods_;
  std::map<std::string, nlohmann::json> leases_;  // "<ns>/<name>" -> object
  std::deque<KubeNodeEvent> node_events_;           // the Node watch history, oldest first
  // What a Node's object is computed from (KubeNodeJsonLocked), its times aside: a settle
  // builds the object only when one of these moved. Every Node watch settles at each of its
  // wakes, and building five objects was about half the simulator's CPU in fleet_scale_bench
  // --clusters 200.
  struct KubeNodeInputs {
    std::map<std::string, std::string> labels, annotations;
    WallTime created;
    std::string tag, kubelet_version, boot_id, address;
    bool unschedulable = false, kube_ready = false, up = false;
    bool operator==(const KubeNodeInputs&) const = default;
  };
  static KubeNodeInputs KubeNodeInputsOf(const SimNode& node);
  // Each Node as last settled: its resourceVersion, its inputs and its object without times.
  struct SettledNode {
    uint64_t resource_version = 0;
    KubeNodeInputs inputs;
    nlohmann::json stored;  // as stored: a later event's previous object
  };
  std::map<std::string, SettledNode> node_settled_;
  uint64_t node_history_start_ = 0;                  // 0: not settled yet
  // Images of the bootstrap workloads set by a server-side apply (BootstrapWorkloadImageLocked).
  std::map<std::string, std::string> bootstrap_images_;
  std::string kubeconfig_;
  std::shared_ptr<const RegistryCatalog> registry_;

 public:
  uint64_t raft_term() const { return raft_term_; }
};

}  // namespace tr::sim
