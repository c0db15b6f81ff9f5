// ClusterProfile: the desired state of one cluster, as written in `clusters/<name>.yaml`
// (docs/profiles.md), and the repository-wide defaults of `reconciler.yaml`.
//
// These are plain values. Decoding from YAML text lives in profile_decode.h; merging the
// defaults under a profile is `ApplyDefaults`. Thread-compatible.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/health_check.h"
#include "core/schematic.h"
#include "core/support_matrix.h"
#include "core/update_policy.h"
#include "core/version.h"

namespace tr::core {

enum class NodeRole { kControlPlane, kWorker };
const char* NodeRoleName(NodeRole role);  // "controlplane" | "worker"

// spec.talos.installerStore: the containerd store a node on Talos 1.13+ pulls its installer
// into and installs it from (LifecycleService), as `talosctl upgrade --namespace` chooses it.
// kSystem: the CRI containerd's system namespace, talosctl's default, kept across a reboot;
// kInMemory ("inmem"): the system containerd, as Omni upgrades, emptied at every reboot.
// Older nodes pull in their legacy Upgrade call, which has no choice.
enum class InstallerStore { kSystem, kInMemory };
const char* InstallerStoreName(InstallerStore store);  // "system" | "inmem"

struct NodeSpec {
  std::string name;
  std::string address;
  NodeRole role = NodeRole::kWorker;
  // spec.nodes[].schematic: this node's own schematic instead of spec.talos.schematic (a GPU
  // worker, say); only in a profile with talos_factory.
  std::optional<Schematic> schematic{};
  // Filled in with the profile's talos_image when `schematic` is set: the installer repository
  // (no tag) and the ID the factory gave this node's schematic. Empty for the other nodes.
  std::string talos_image{};
  std::string talos_schematic_id{};
};

// A recurring maintenance window: new nodes start only inside one.
struct MaintenanceWindow {
  std::vector<int> days;             // 0 = Sunday ... 6 = Saturday; sorted, unique
  std::chrono::minutes start{0};     // local time of day, from midnight
  std::chrono::minutes duration{0};  // > 0 and at most 7 days
  std::string timezone = "UTC";      // IANA name
};

enum class FailureAction { kHalt, kRollback };
// Which upgrade goes first when the support matrix allows both orders.
enum class UpgradeOrder { kTalosFirst, kKubernetesFirst };
// What a drain does with the pods still on the node at its timeout (PodDisruptionBudgets
// refusing their eviction): halt the rollout before the node reboots, or delete them.
enum class DrainTimeoutAction { kHalt, kForce };

// `policy.install`: when a Talos 1.13+ step writes the new version to a node's other slot. In the
// window, node by node before its drain (today's order); or ahead of any window on every node at
// once, no cordon, no drain, no reboot, so that the window holds only what disrupts.
enum class InstallTiming { kInWindow, kAhead };

// `policy.drain`: the lifecycle path's cordon and drain (Talos 1.13 and newer).
struct DrainPolicy {
  std::optional<std::chrono::seconds> timeout;  // unset: the daemon's --drain-timeout (5m)
  DrainTimeoutAction on_timeout = DrainTimeoutAction::kHalt;
};

struct Policy {
  int max_parallel_workers = 1;
  std::chrono::seconds node_timeout{30 * 60};
  std::chrono::seconds settle{30};
  std::vector<MaintenanceWindow> windows;
  std::vector<HealthCheck> health_checks;
  bool etcd_snapshot = true;
  FailureAction on_failure = FailureAction::kHalt;
  bool paused = false;
  bool allow_downgrade = false;
  UpgradeOrder upgrade_order = UpgradeOrder::kTalosFirst;
  std::chrono::seconds gate_timeout{30 * 60};  // a failing health check fails the rollout after
  DrainPolicy drain;
  InstallTiming install = InstallTiming::kInWindow;
};

// The policy keys a file actually set, so that defaults merge under a profile key by key.
struct PolicyOverrides {
  std::optional<int> max_parallel_workers;
  std::optional<std::chrono::seconds> node_timeout;
  std::optional<std::chrono::seconds> settle;
  std::optional<std::vector<MaintenanceWindow>> windows;
  std::optional<std::vector<HealthCheck>> health_checks;
  std::optional<bool> etcd_snapshot;
  std::optional<FailureAction> on_failure;
  std::optional<bool> paused;
  std::optional<bool> allow_downgrade;
  std::optional<UpgradeOrder> upgrade_order;
  std::optional<std::chrono::seconds> gate_timeout;
  std::optional<std::chrono::seconds> drain_timeout;   // policy.drain.timeout
  std::optional<DrainTimeoutAction> drain_on_timeout;  // policy.drain.onTimeout
  std::optional<InstallTiming> install;                // policy.install
};

// `base` with every key that `overrides` sets replaced.
Policy MergePolicy(const Policy& base, const PolicyOverrides& overrides);

// `spec.promotion`: this cluster starts a new version only after every cluster it names ran
// at least that version, Ready, for `soak`.
struct Promotion {
  struct After {
    std::string cluster;
    int line = 0;  // where it is written, for validation across profiles
    int column = 0;
  };
  std::vector<After> after;
  std::chrono::seconds soak{0};
};

// The project's own annotation prefix, and the one annotation the reconciler reads.
inline constexpr std::string_view kAnnotationPrefix = "talos-reconciler.dev/";
inline constexpr std::string_view kRetryAnnotation = "talos-reconciler.dev/retry";

struct ClusterProfile {
  std::string file;                    // repository-relative path it was read from
  std::string name;                    // metadata.name, a DNS-1123 label
  // metadata.labels, Kubernetes label syntax (core/names.h): what notifications are filtered on.
  std::map<std::string, std::string> labels;
  // metadata.annotations["talos-reconciler.dev/retry"]: a request to try a failed rollout
  // again. A failure remembers the token it happened under (RolloutFailure::retry); a
  // different one here lifts its halt. Written by `talos-reconciler retry`; empty: none.
  std::string retry_token{};
  std::vector<std::string> endpoints;  // control-plane apid endpoints, host or host:port
  std::string credentials;             // names a talosconfig; never the secret itself
  Version talos_version;
  // Installer repository, no tag: the tag is v<version>. Written in the file (talos.image);
  // empty for a profile with `talos_factory` until the reconciler knows the schematic ID
  // and fills it in (FactoryInstallerRepository).
  std::string talos_image;
  // talos.schematic (with factory, platform, secureboot): the installer comes from an Image
  // Factory. Exactly one of this and a written talos.image.
  std::optional<FactoryInstaller> talos_factory{};
  // The ID the factory gave talos_factory's schematic, filled in with talos_image; the planner
  // upgrades a node whose observed schematic differs (core/planner.h).
  std::string talos_schematic_id{};
  InstallerStore talos_installer_store = InstallerStore::kSystem;
  Version kubernetes_version;
  std::vector<NodeSpec> nodes;
  PolicyOverrides policy_overrides;  // as written in the file
  Policy policy;                     // effective: defaults, then the file's overrides
  std::optional<Promotion> promotion;
  // spec.shard: the shard the cluster is pinned to under `run --shards` (instead of the hash
  // of its name; core/shards.h). Below the number of shards when one is known.
  std::optional<int> shard;
  // spec.updates as written, and the effective release-proposal policy: reconciler.yaml's
  // `updates`, then the file's (core/update_policy.h).
  UpdatePolicyOverrides updates_overrides{};
  UpdatePolicy updates{};

  // The installer image reference for the desired version: "<talos_image>:v<version>"; empty
  // while talos_image is (a schematic profile before its ID is known).
  std::string InstallerImage() const;
};

// `reconciler.yaml`: repository-wide defaults and additions to the built-in catalogs.
struct RepositoryDefaults {
  PolicyOverrides policy;                          // merged under every profile's policy
  std::vector<SupportMatrixEntry> support_matrix;  // added to (or replacing) built-in rows
  std::vector<Version> talos_releases;             // added to the release catalog
  std::vector<Version> kubernetes_releases;        // added to the release catalog
  // imageFactory: the factory URL of profiles whose talos.schematic names none; empty: the
  // daemon's --image-factory.
  std::string image_factory{};
  UpdatePolicyOverrides updates{};  // the release-proposal policy under every profile's
};

// True when the profile lists `node` with role controlplane; false for a worker or a name the
// profile does not list.
bool IsControlPlane(const ClusterProfile& profile, std::string_view node);

// The schematic ID `node` should run: its own (spec.nodes[].schematic) when it has one, else
// the profile's; the profile's for a name the profile does not list.
const std::string& DesiredSchematicId(const ClusterProfile& profile, std::string_view node);

}  // namespace tr::core
