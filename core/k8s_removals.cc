#include "core/k8s_removals.h"

#include <algorithm>

#include "core/text.h"

namespace tr::core {

std::string RemovedApiResource::ListPath() const {
  return "/apis/" + group + "/" + version + "/" + resource;
}

std::string RemovedApiResource::Name() const { return resource + "." + version + "." + group; }

KubernetesRemovals RemovalsForUpgrade(MinorVersion from, MinorVersion to) {
  if (to != from.Next() || from.major != 1) return {};
  switch (from.minor) {
    case 31:
      return {.feature_gates = {"AllowServiceLBStatusOnNonLB", "CloudDualStackNodeIPs",
                                "DRAControlPlaneController", "HPAContainerMetrics", "KMSv2",
                                "KMSv2KDF", "LegacyServiceAccountTokenCleanUp",
                                "MinDomainsInPodTopologySpread", "NewVolumeManagerReconstruction",
                                "NodeOutOfServiceVolumeDetach", "ServerSideApply",
                                "ServerSideFieldValidation", "StableLoadBalancerNodeSet",
                                "ValidatingAdmissionPolicy", "ZeroLimitedNominalConcurrencyShares"},
              .apiserver_flags = {},
              .kubelet_flags = {},
              .api_resources = {{"resource.k8s.io", "v1alpha3", "podschedulingcontexts"}}};
    case 32:
      return {
          .feature_gates = {"AppArmor", "AppArmorFields", "CPUManager", "DisableCloudProviders",
                            "DisableKubeletCloudCredentialProviders", "JobPodFailurePolicy",
                            "KubeProxyDrainingTerminatingNodes", "PDBUnhealthyPodEvictionPolicy",
                            "PersistentVolumeLastPhaseTransitionTime", "VolumeCapacityPriority"},
          .apiserver_flags = {"cloud-config"},
          .kubelet_flags = {},
          .api_resources = {}};
    case 33:
      return {.feature_gates = {"DevicePluginCDIDevices", "LegacySidecarContainers",
                                "PodDisruptionConditions"},
              .apiserver_flags = {},
              .kubelet_flags = {"cloud-config"},
              .api_resources = {}};
    case 34:
      return {.feature_gates = {"SizeMemoryBackedVolumes", "UserNamespacesHostNetworkSupport"},
              .apiserver_flags = {},
              .kubelet_flags = {"pod-infra-container-image"},
              .api_resources = {}};
    default:
      return {};
  }
}

std::vector<std::string> RemovedItemsInArgs(const std::vector<std::string>& args,
                                            const std::vector<std::string>& flags,
                                            const std::vector<std::string>& gates) {
  std::vector<std::string> found;
  for (const std::string& arg : args) {
    if (!arg.starts_with("--")) continue;
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (std::find(flags.begin(), flags.end(), name) != flags.end())
      found.push_back("flag --" + name);
    if (name != "feature-gates" || eq == std::string::npos) continue;
    for (std::string_view gate : Split(std::string_view(arg).substr(eq + 1), ',')) {
      const std::string gate_name(gate.substr(0, gate.find('=')));
      if (std::find(gates.begin(), gates.end(), gate_name) != gates.end()) {
        found.push_back("feature gate " + gate_name);
      }
    }
  }
  return found;
}

}  // namespace tr::core
