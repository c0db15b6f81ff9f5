// KubernetesUpgrade: one minor Kubernetes upgrade of a Talos cluster, the way `talosctl
// upgrade-k8s` does it, through the Talos API (machine configuration, COSI resources, image
// pulls) and the Kubernetes API (static pods, Nodes):
//   1. pre-checks: the target against every node's Talos version (support matrix); every
//      component on every node patchable where that node's configuration keeps it (its own
//      document or its v1alpha1 section, machine_config.h); one minor at most above the lowest
//      running version; removed APIs still holding objects; removed flags
//      and feature gates still set (core/k8s_removals.h);
//   2. image pre-pull on every node, for the components that are not at the target yet;
//   3. kube-apiserver, kube-controller-manager, kube-scheduler, each node by node over the
//      control planes: the MachineConfig (COSI Get) with the image patched, sent back with
//      ApplyConfiguration mode NO_REBOOT, then waiting for the static pod on that node to carry
//      the new config version, run the new image and be Ready;
//   4. kube-proxy: its image in every control plane's machine configuration;
//   5. the kubelet on every node, control planes first, waiting until the Node reports the new
//      kubelet version and is Ready;
//   6. the bootstrap manifests Talos renders from the machine configuration (the kube-proxy
//      DaemonSet, CoreDNS, ...), read from the first control plane and synced as talosctl does
//      (manifest_sync.h): server-side applied as field manager `talos`, each object only when
//      the cluster does not already have it as Talos applied it, listed in Talos's inventory
//      ConfigMap; objects that left the manifests pruned (unless prune_manifests is off); then
//      a wait for the DaemonSets and Deployments changed to roll out.
//
// Resumable: every step first reads what the node's configuration says. A component already
// configured with the target image is not applied again; the run only waits for it to be up.
// So a run that was killed anywhere can be started again and completes with nothing applied
// twice and nothing skipped.
//
// Thread-compatible: one Run at a time per object. Run blocks; it is stoppable.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "base/env.h"
#include "core/k8s_removals.h"
#include "core/support_matrix.h"
#include "core/version.h"
#include "reconciler/clients/kube/kube_client.h"
#include "reconciler/clients/talos/talos_client.h"
#include "reconciler/operations/k8s_upgrade/machine_config.h"

namespace tr::reconciler::k8s_upgrade {

struct UpgradeNode {
  std::string name;     // the Kubernetes Node name (the hostname)
  std::string address;  // the Talos API target (`node` header)
  bool control_plane = false;
};

struct UpgradeOptions {
  core::Version target;  // the Kubernetes version to reach, e.g. 1.35.0
  std::vector<UpgradeNode> nodes;
  core::SupportMatrix matrix = core::SupportMatrix::BuiltIn();
  bool pre_pull = true;
  std::chrono::milliseconds poll_interval{1000};
  std::chrono::milliseconds static_pod_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds kubelet_timeout{std::chrono::minutes(3)};
  // Delete what Talos's inventory lists and the manifests no longer hold (kube-proxy once
  // cluster.proxy.disabled); false as `talosctl upgrade-k8s --manifests-no-prune`.
  bool prune_manifests = true;
  // How long the manifests' DaemonSets and Deployments may take to roll out (talosctl
  // --manifests-reconcile-timeout).
  std::chrono::milliseconds manifests_timeout{std::chrono::minutes(5)};
  // Fencing (leader election): asked just before each change to the cluster (a machine config
  // applied, a manifest applied); a non-OK answer stops the run there, Cancelled, with nothing
  // of that change made. Empty: never asked.
  std::function<absl::Status()> before_change;
};

// Where the run is: `phase` "pre-checks", "image pull", "static pods", "kube-proxy",
// "kubelets", "manifests", "done"; `done` of `total` steps of the phase.
struct UpgradeProgress {
  std::string phase;
  int done = 0;
  int total = 0;
  std::string message;  // the line to print
};

struct UpgradeOutcome {
  // OK; FailedPrecondition for a pre-check that refuses (nothing changed); Aborted for a
  // component that did not come up (stop and look); Unavailable / DeadlineExceeded for an API
  // that did not answer (retry: the run resumes); Cancelled when stopped; InvalidArgument for
  // a target or configuration that cannot be used.
  absl::Status status;
  std::string component;      // what failed: "pre-checks", "image pull", "kube-apiserver", ...
  std::string node;           // the node it failed on; "" when not node-specific
  std::string from;           // the lowest Kubernetes version found before the run ("1.34.1")
  int applied = 0;            // configurations applied by this run
  int already_done = 0;       // components found at the target and left alone
  int manifests_applied = 0;  // bootstrap manifest objects applied (the others were current)
  int manifests_pruned = 0;   // objects deleted because they left the manifests
};

class KubernetesUpgrade {
 public:
  // `env` times the waits between checks (the real one: the checks are real API calls).
  KubernetesUpgrade(talos::TalosClient& talos, kube::KubeClient& kube, Env& env,
                    UpgradeOptions options,
                    std::function<void(const UpgradeProgress&)> on_progress);

  UpgradeOutcome Run(std::stop_token stop);

 private:
  struct Failure {
    absl::Status status;
    std::string component;
    std::string node;
  };
  using Step = std::optional<Failure>;  // nullopt: the step succeeded

  Step PreChecks(UpgradeOutcome& outcome);
  Step CheckTalosVersions();
  Step CheckConfigPlaces();
  Step CheckVersionPath(UpgradeOutcome& outcome);
  Step CheckRemovals(core::MinorVersion from);
  Step CheckRemovedInConfig(const core::KubernetesRemovals& removals);
  Step CheckRemovedInRunningArgs(const core::KubernetesRemovals& removals);
  Step PrePull(std::stop_token stop);
  Step StaticPods(std::stop_token stop, UpgradeOutcome& outcome);
  Step KubeProxy(std::stop_token stop, UpgradeOutcome& outcome);
  Step Kubelets(std::stop_token stop, UpgradeOutcome& outcome);
  Step SyncManifests(std::stop_token stop, UpgradeOutcome& outcome);

  // Sets `component`'s image to the target in the node's configuration unless it is already
  // there; `*applied` says whether a configuration was sent.
  Step EnsureImage(const UpgradeNode& node, Component component, bool* applied);
  Step WaitStaticPod(std::stop_token stop, const UpgradeNode& node, Component component);
  Step WaitKubelet(std::stop_token stop, const UpgradeNode& node);
  // The Cancelled failures of a stop, saying where the run stopped and what a new run does.
  static Failure Stopped(std::string_view component, const UpgradeNode& node);
  static Failure StoppedWaiting(std::string_view component, const UpgradeNode& node);
  // options_.before_change's refusal as a Failure (Cancelled); nullopt when it allows the change.
  Step Fenced(std::string_view component, const UpgradeNode& node);

  absl::StatusOr<std::string> MachineConfig(const UpgradeNode& node);
  std::string TargetImage(const std::string& current) const;
  void Report(std::string phase, int done, int total, std::string message);

  talos::TalosClient& talos_;
  kube::KubeClient& kube_;
  Env& env_;
  UpgradeOptions options_;
  std::function<void(const UpgradeProgress&)> on_progress_;
};

}  // namespace tr::reconciler::k8s_upgrade
