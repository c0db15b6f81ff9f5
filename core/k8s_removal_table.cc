// The built-in table of what each Kubernetes minor upgrade removes (core/k8s_removals.h).
//
// Source: siderolabs/go-kubernetes `kubernetes/upgrade/checks.go` at v0.2.41 (commit 0caf1f2), the
// table `talosctl upgrade-k8s` checks, which cites the Kubernetes changelog or pull request of
// each item. Upstream marks the 1.35→1.36 and 1.36→1.37 lists provisional (to be updated from
// the final release notes), so they may grow. 1.37→1.38 has no upstream list yet: its entry is
// here, empty, so that the table covers every minor the support matrix knows.
#include "core/k8s_removals.h"

namespace tr::core {
namespace {

// Paths 1.24→1.25 to 1.29→1.30.
KubernetesRemovals RemovalsUpTo130(int from_minor) {
  switch (from_minor) {
    case 24: {
      KubernetesRemovals r;
      r.feature_gates = {"CSIVolumeFSGroupPolicy", "ConfigurableFSGroupPolicy",
                         "PodDisruptionBudget", "SelectorIndex"};
      r.apiserver_flags = {"service-account-api-audiences"};
      r.controller_manager_flags = {"deleting-pods-qps", "deleting-pods-burst",
                                    "register-retry-count"};
      r.admission_plugins = {"PodSecurityPolicy"};
      r.api_resources = {{"policy", "v1beta1", "podsecuritypolicies"}};
      return r;
    }
    case 25: {
      KubernetesRemovals r;
      r.feature_gates = {"DynamicKubeletConfig"};
      r.apiserver_flags = {"master-service-namespace"};
      return r;
    }
    case 26: {
      KubernetesRemovals r;
      r.feature_gates = {"ExpandCSIVolumes",
                         "ExpandInUsePersistentVolumes",
                         "ExpandPersistentVolumes",
                         "ControllerManagerLeaderMigration",
                         "CSIMigration",
                         "CSIInlineVolume",
                         "EphemeralContainers",
                         "LocalStorageCapacityIsolation",
                         "NetworkPolicyEndPort",
                         "StatefulSetMinReadySeconds",
                         "IdentifyPodOS",
                         "DaemonSetUpdateSurge"};
      r.controller_manager_flags = {"enable-taint-manager", "pod-eviction-timeout"};
      r.kubelet_flags = {"container-runtime", "master-service-namespace"};
      return r;
    }
    case 27: {
      KubernetesRemovals r;
      r.feature_gates = {"AdvancedAuditing",
                         "DelegateFSGroupToCSIDriver",
                         "DevicePlugins",
                         "DisableAcceleratorUsageMetrics",
                         "EndpointSliceTerminatingCondition",
                         "CSIStorageCapacity",
                         "CSIMigrationGCE",
                         "KubeletCredentialProviders",
                         "MixedProtocolLBService",
                         "ServiceInternalTrafficPolicy",
                         "ServiceIPStaticSubrange",
                         "WindowsHostProcessContainers"};
      return r;
    }
    case 28: {
      KubernetesRemovals r;
      r.api_resources = {{"networking.k8s.io", "v1alpha1", "clustercidrs"}};
      return r;
    }
    case 29: {
      KubernetesRemovals r;
      r.feature_gates = {"ExpandedDNSConfig",
                         "ExperimentalHostUserNamespaceDefaultingGate",
                         "IPTablesOwnershipCleanup",
                         "KubeletPodResources",
                         "KubeletPodResourcesGetAllocatable",
                         "MinimizeIPTablesRestore",
                         "ProxyTerminatingEndpoints",
                         "RemoveSelfLink"};
      r.admission_plugins = {"SecurityContextDeny"};
      return r;
    }
    default:
      return {};
  }
}

// Paths 1.30→1.31 to 1.34→1.35.
KubernetesRemovals RemovalsUpTo135(int from_minor) {
  switch (from_minor) {
    case 30: {
      // PersistentVolumeLabel: kubernetes#124505 (not in go-kubernetes; kube-apiserver refuses to
      // start on an admission plugin it does not know).
      KubernetesRemovals r;
      r.feature_gates = {
          "APIPriorityAndFairness",        "CSINodeExpandSecret",
          "ConsistentHTTPGetHandlers",     "DefaultHostNetworkHostPortsInPodTemplates",
          "ServiceNodePortStaticSubrange", "SkipReadOnlyValidationGCE"};
      r.controller_manager_flags = {"volume-host-cidr-denylist", "volume-host-allow-local-loopback",
                                    "horizontal-pod-autoscaler-upscale-delay",
                                    "horizontal-pod-autoscaler-downscale-delay"};
      r.kubelet_flags = {"keep-terminated-pod-volumes", "iptables-masquerade-bit",
                         "iptables-drop-bit"};
      r.admission_plugins = {"PersistentVolumeLabel"};
      return r;
    }
    case 31: {
      KubernetesRemovals r;
      r.feature_gates = {"AllowServiceLBStatusOnNonLB",
                         "CloudDualStackNodeIPs",
                         "DRAControlPlaneController",
                         "HPAContainerMetrics",
                         "KMSv2",
                         "KMSv2KDF",
                         "LegacyServiceAccountTokenCleanUp",
                         "MinDomainsInPodTopologySpread",
                         "NewVolumeManagerReconstruction",
                         "NodeOutOfServiceVolumeDetach",
                         "ServerSideApply",
                         "ServerSideFieldValidation",
                         "StableLoadBalancerNodeSet",
                         "ValidatingAdmissionPolicy",
                         "ZeroLimitedNominalConcurrencyShares"};
      r.api_resources = {{"resource.k8s.io", "v1alpha3", "podschedulingcontexts"}};
      return r;
    }
    case 32: {
      KubernetesRemovals r;
      r.feature_gates = {"AppArmor",
                         "AppArmorFields",
                         "CPUManager",
                         "DisableCloudProviders",
                         "DisableKubeletCloudCredentialProviders",
                         "JobPodFailurePolicy",
                         "KubeProxyDrainingTerminatingNodes",
                         "PDBUnhealthyPodEvictionPolicy",
                         "PersistentVolumeLastPhaseTransitionTime",
                         "VolumeCapacityPriority"};
      r.apiserver_flags = {"cloud-config"};
      return r;
    }
    case 33: {
      KubernetesRemovals r;
      r.feature_gates = {"DevicePluginCDIDevices", "LegacySidecarContainers",
                         "PodDisruptionConditions"};
      r.kubelet_flags = {"cloud-config"};
      return r;
    }
    case 34: {
      KubernetesRemovals r;
      r.feature_gates = {"SizeMemoryBackedVolumes", "UserNamespacesHostNetworkSupport"};
      r.kubelet_flags = {"pod-infra-container-image"};
      return r;
    }
    default:
      return {};
  }
}

// Paths 1.35→1.36 and later; the first two are provisional upstream (see the file comment).
KubernetesRemovals RemovalsFrom135(int from_minor) {
  switch (from_minor) {
    case 35: {
      KubernetesRemovals r;
      r.feature_gates = {"CSIMigrationPortworx", "HonorPVReclaimPolicy",
                         "InTreePluginPortworxUnregister",
                         "WatchFromStorageWithoutResourceVersion"};
      return r;
    }
    case 36: {
      // The kubelet's cAdvisor flags (kubernetes#139870): the kubelet fails to start if any is
      // set, so a kubelet patched to 1.37 with one of them never comes back.
      KubernetesRemovals r;
      r.feature_gates = {"AnyVolumeDataSource", "DeclarativeValidationTakeover", "GangScheduling",
                         "PreventStaticPodAPIReferences", "WorkloadAwarePreemption"};
      r.kubelet_flags = {"application-metrics-count-limit",
                         "boot-id-file",
                         "container-hints",
                         "containerd",
                         "containerd-namespace",
                         "enable-load-reader",
                         "event-storage-age-limit",
                         "event-storage-event-limit",
                         "global-housekeeping-interval",
                         "log-cadvisor-usage",
                         "machine-id-file",
                         "storage-driver-user",
                         "storage-driver-password",
                         "storage-driver-host",
                         "storage-driver-db",
                         "storage-driver-table",
                         "storage-driver-secure",
                         "storage-driver-buffer-duration"};
      r.api_resources = {{"scheduling.k8s.io", "v1alpha2", "workloads"},
                         {"scheduling.k8s.io", "v1alpha2", "podgroups"}};
      return r;
    }
    default:
      return {};  // 37: nothing listed upstream yet
  }
}

// The oldest and newest "from" minors the table has an entry for.
constexpr int kFirstFromMinor = 24;
constexpr int kLastFromMinor = 37;

}  // namespace

std::optional<KubernetesRemovals> RemovalTableEntry(MinorVersion from, MinorVersion to) {
  if (from.major != 1 || to != from.Next()) return std::nullopt;
  if (from.minor < kFirstFromMinor || from.minor > kLastFromMinor) return std::nullopt;
  if (from.minor < 30) return RemovalsUpTo130(from.minor);
  if (from.minor < 35) return RemovalsUpTo135(from.minor);
  return RemovalsFrom135(from.minor);
}

}  // namespace tr::core
