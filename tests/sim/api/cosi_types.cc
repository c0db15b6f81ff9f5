// The COSI resource types a Talos node serves (the resource definitions of
// siderolabs/talos pkg/machinery/resources, Talos 1.15 development tree) and the Talos minor
// each first appeared in (the same files at v1.5.0 ... v1.13.0, v1.14.0-rc.1 and main, commit
// ad88231). apid refuses any other type with PermissionDenied `resource type "<type>" is not
// supported` (internal/app/resources/access.go, the same from 1.5 to main; it looks the
// lower-cased type up among the node's resource definitions), so a 1.13 node asked for
// ImageFactorySchematics (from 1.14) answers that, not NotFound.
#include <algorithm>
#include <cctype>
#include <string_view>

namespace tr::sim {
namespace {

// Sorted.
constexpr std::string_view kTypes[] = {
    "APIServerConfigs.kubernetes.talos.dev", "APIServiceConfigs.runtime.talos.dev",
    "AcquireConfigSpecs.v1alpha1.talos.dev", "AcquireConfigStatuses.v1alpha1.talos.dev",
    "AddressSpecs.net.talos.dev", "AddressStatuses.net.talos.dev",
    "AdjtimeStatuses.v1alpha1.talos.dev", "AdmissionControlConfigs.kubernetes.talos.dev",
    "Affiliates.cluster.talos.dev", "ApiCertificates.secrets.talos.dev",
    "AuditPolicyConfigs.kubernetes.talos.dev", "AuthenticationConfigs.kubernetes.talos.dev",
    "AuthorizationConfigs.kubernetes.talos.dev", "BGPInstanceConfigs.net.talos.dev",
    "BGPPeerStatuses.net.talos.dev", "BaseRuntimeSpecConfigs.cri.talos.dev",
    "BlockDevices.block.talos.dev", "BlockSymlinks.block.talos.dev", "BootIDs.runtime.talos.dev",
    "BootedEntries.talos.dev", "BootstrapManifestsConfigs.kubernetes.talos.dev",
    "CPUCores.hardware.talos.dev", "CPUStats.perf.talos.dev", "CertSANs.secrets.talos.dev",
    "ConfigStatuses.kubernetes.talos.dev", "ContainerImageStatuses.containers.talos.dev",
    "ContainerInstanceSpecs.containers.talos.dev", "ContainerSpecs.containers.talos.dev",
    "ControllerManagerConfigs.kubernetes.talos.dev", "CustomizationConfigs.cri.talos.dev",
    "DNSResolveCaches.net.talos.dev", "DNSUpstreams.net.talos.dev",
    "DeviceConfigSpecs.net.talos.dev", "DevicesStatuses.runtime.talos.dev",
    "Diagnostics.runtime.talos.dev", "DiscoveredVolumes.block.talos.dev",
    "DiscoveredVolumesStatuses.block.talos.dev", "DiscoveryConfigs.cluster.talos.dev",
    "DiscoveryRefreshRequests.block.talos.dev", "DiscoveryRefreshStatuses.block.talos.dev",
    "Disks.block.talos.dev", "EncryptionSalts.secrets.talos.dev", "Endpoints.kubernetes.talos.dev",
    "Environments.runtime.talos.dev", "EtcFileSpecs.files.talos.dev",
    "EtcFileStatuses.files.talos.dev", "EtcdConfigs.etcd.talos.dev",
    "EtcdEncryptionConfigs.kubernetes.talos.dev", "EtcdMembers.etcd.talos.dev",
    "EtcdRootSecrets.secrets.talos.dev", "EtcdSecrets.secrets.talos.dev",
    "EtcdSpecs.etcd.talos.dev", "EthernetSpecs.net.talos.dev", "EthernetStatuses.net.talos.dev",
    "EventSinkConfigs.runtime.talos.dev", "ExtensionServiceConfigStatuses.runtime.talos.dev",
    "ExtensionServiceConfigs.runtime.talos.dev", "ExtensionStatuses.runtime.talos.dev",
    "ExtraManifestsConfigs.kubernetes.talos.dev", "FSScrubSchedules.block.talos.dev",
    "FSScrubStatuses.block.talos.dev", "HardwareAddresses.net.talos.dev",
    "HostDNSConfigs.net.talos.dev", "HostnameSpecs.net.talos.dev", "HostnameStatuses.net.talos.dev",
    "Identities.cluster.talos.dev", "ImageCacheConfigs.cri.talos.dev",
    "ImageFactorySchematics.runtime.talos.dev", "ImageVerificationRules.security.talos.dev",
    "Infos.cluster.talos.dev", "KernelCmdlines.runtime.talos.dev",
    "KernelModuleSpecs.runtime.talos.dev", "KernelModuleStatuses.runtime.talos.dev",
    "KernelParamDefaultSpecs.runtime.talos.dev", "KernelParamSpecs.runtime.talos.dev",
    "KernelParamStatuses.runtime.talos.dev", "KmsgLogConfigs.runtime.talos.dev",
    "KubePrismConfigs.kubernetes.talos.dev", "KubePrismEndpoints.kubernetes.talos.dev",
    "KubePrismStatuses.kubernetes.talos.dev", "KubeSpanConfigs.kubespan.talos.dev",
    "KubeSpanEndpoints.kubespan.talos.dev", "KubeSpanIdentities.kubespan.talos.dev",
    "KubeSpanPeerSpecs.kubespan.talos.dev", "KubeSpanPeerStatuses.kubespan.talos.dev",
    "KubeletConfigs.kubernetes.talos.dev", "KubeletKubeconfigs.kubernetes.talos.dev",
    "KubeletLifecycles.kubernetes.talos.dev", "KubeletSecrets.secrets.talos.dev",
    "KubeletSpecs.kubernetes.talos.dev", "KubeletStatuses.kubernetes.talos.dev",
    "KubernetesAccessConfigs.cluster.talos.dev", "KubernetesDynamicCerts.secrets.talos.dev",
    "KubernetesRootSecrets.secrets.talos.dev", "KubernetesSecrets.secrets.talos.dev",
    "LVMLogicalVolumeSpecs.storage.talos.dev", "LVMLogicalVolumeStatuses.storage.talos.dev",
    "LVMPhysicalVolumeSpecs.storage.talos.dev", "LVMPhysicalVolumeStatuses.storage.talos.dev",
    "LVMRefreshRequests.storage.talos.dev", "LVMValidationErrors.storage.talos.dev",
    "LVMVolumeGroupSpecs.storage.talos.dev", "LVMVolumeGroupStatuses.storage.talos.dev",
    "LinkAliasSpecs.net.talos.dev", "LinkRefreshes.net.talos.dev", "LinkSpecs.net.talos.dev",
    "LinkStatuses.net.talos.dev", "LoadedKernelModules.runtime.talos.dev",
    "MDArraySpecs.storage.talos.dev", "MDArrayStatuses.storage.talos.dev",
    "MDRefreshRequests.storage.talos.dev", "MachineConfigs.config.talos.dev",
    "MachineResetSignals.runtime.talos.dev", "MachineStatuses.runtime.talos.dev",
    "MachineTypes.config.talos.dev", "MaintenanceRootSecrets.secrets.talos.dev",
    "MaintenanceServiceConfigs.runtime.talos.dev", "MaintenanceServiceRequests.runtime.talos.dev",
    "ManifestStatuses.kubernetes.talos.dev", "Manifests.kubernetes.talos.dev",
    "Members.cluster.talos.dev", "MemoryModules.hardware.talos.dev", "MemoryStats.perf.talos.dev",
    "MetaKeys.runtime.talos.dev", "MetaLoads.runtime.talos.dev", "MountRequests.block.talos.dev",
    "MountStatuses.block.talos.dev", "MountStatuses.runtime.talos.dev",
    "NTPStatuses.v1alpha1.talos.dev", "NetworkStatuses.net.talos.dev",
    "NfTablesChains.net.talos.dev", "NodeAddressFilters.net.talos.dev",
    "NodeAddressSortAlgorithms.net.talos.dev", "NodeAddresses.net.talos.dev",
    "NodeAnnotationSpecs.k8s.talos.dev", "NodeCordonedSpecs.k8s.talos.dev",
    "NodeIPConfigs.kubernetes.talos.dev", "NodeIPs.kubernetes.talos.dev",
    "NodeLabelSpecs.k8s.talos.dev", "NodeStatuses.kubernetes.talos.dev",
    "NodeTaintSpecs.k8s.talos.dev", "Nodenames.kubernetes.talos.dev", "OOMActions.talos.dev",
    "OSRootSecrets.secrets.talos.dev", "OperatorSpecs.net.talos.dev",
    "PCIDevices.hardware.talos.dev", "PCIDriverRebindConfigs.runtime.talos.dev",
    "PCIDriverRebindStatuses.runtime.talos.dev", "PCRStatuses.hardware.talos.dev",
    "PKIStatuses.etcd.talos.dev", "PlatformConfigs.net.talos.dev", "PlatformMetadatas.talos.dev",
    "ProbeSpecs.net.talos.dev", "ProbeStatuses.net.talos.dev", "Processors.hardware.talos.dev",
    "RebootRequests.runtime.talos.dev", "RegistryConfigs.cri.talos.dev",
    "ResolverSpecs.net.talos.dev", "ResolverStatuses.net.talos.dev", "RouteSpecs.net.talos.dev",
    "RouteStatuses.net.talos.dev", "RoutingRuleSpecs.net.talos.dev",
    "RoutingRuleStatuses.net.talos.dev", "SBOMItems.talos.dev",
    "SchedulerConfigs.kubernetes.talos.dev", "SeccompProfiles.cri.talos.dev",
    "SecretStatuses.kubernetes.talos.dev", "SecurityStates.talos.dev",
    "ServicePIDs.runtime.talos.dev", "Services.v1alpha1.talos.dev",
    "SiderolinkConfigs.siderolink.talos.dev", "SiderolinkStatuses.siderolink.talos.dev",
    "SiderolinkTunnels.siderolink.talos.dev", "StaticHosts.net.talos.dev",
    "StaticPodServerStatuses.kubernetes.talos.dev", "StaticPodStatuses.kubernetes.talos.dev",
    "StaticPods.kubernetes.talos.dev", "SwapStatuses.block.talos.dev",
    "SystemDisks.block.talos.dev", "SystemInformations.hardware.talos.dev",
    "TUFTrustedRoots.security.talos.dev", "TimeServerSpecs.net.talos.dev",
    "TimeServerStatuses.net.talos.dev", "TimeStatuses.v1alpha1.talos.dev",
    "TrustdCertificates.secrets.talos.dev", "UnattendedInstallStatuses.runtime.talos.dev",
    "UniqueMachineTokens.runtime.talos.dev", "UserDiskConfigStatuses.block.talos.dev",
    "Versions.runtime.talos.dev", "VolumeConfigs.block.talos.dev",
    "VolumeLifecycles.block.talos.dev", "VolumeMountRequests.block.talos.dev",
    "VolumeMountStatuses.block.talos.dev", "VolumeStatuses.block.talos.dev",
    "VolumeTrimSchedules.block.talos.dev", "WatchdogTimerConfigs.runtime.talos.dev",
    "WatchdogTimerStatuses.runtime.talos.dev", "ZswapStatuses.block.talos.dev",
};

// The types not defined at 1.5 yet, with the minor that added them.
struct AddedIn {
  std::string_view type;
  int minor;
};
constexpr AddedIn kAddedIn[] = {
    {"APIServiceConfigs.runtime.talos.dev", 13},
    {"AdjtimeStatuses.v1alpha1.talos.dev", 6},
    {"AuthenticationConfigs.kubernetes.talos.dev", 14},
    {"AuthorizationConfigs.kubernetes.talos.dev", 9},
    {"BGPInstanceConfigs.net.talos.dev", 14},
    {"BGPPeerStatuses.net.talos.dev", 14},
    {"BaseRuntimeSpecConfigs.cri.talos.dev", 14},
    {"BlockDevices.block.talos.dev", 7},
    {"BlockSymlinks.block.talos.dev", 10},
    {"BootIDs.runtime.talos.dev", 14},
    {"BootedEntries.talos.dev", 11},
    {"CPUCores.hardware.talos.dev", 14},
    {"ContainerImageStatuses.containers.talos.dev", 15},
    {"ContainerInstanceSpecs.containers.talos.dev", 15},
    {"ContainerSpecs.containers.talos.dev", 14},
    {"CustomizationConfigs.cri.talos.dev", 14},
    {"DNSResolveCaches.net.talos.dev", 7},
    {"DNSUpstreams.net.talos.dev", 7},
    {"Diagnostics.runtime.talos.dev", 8},
    {"DiscoveredVolumes.block.talos.dev", 7},
    {"DiscoveredVolumesStatuses.block.talos.dev", 14},
    {"DiscoveryRefreshRequests.block.talos.dev", 8},
    {"DiscoveryRefreshStatuses.block.talos.dev", 8},
    {"Disks.block.talos.dev", 8},
    {"EncryptionSalts.secrets.talos.dev", 11},
    {"Environments.runtime.talos.dev", 13},
    {"EtcdEncryptionConfigs.kubernetes.talos.dev", 14},
    {"EthernetSpecs.net.talos.dev", 10},
    {"EthernetStatuses.net.talos.dev", 10},
    {"ExtensionServiceConfigStatuses.runtime.talos.dev", 7},
    {"ExtensionServiceConfigs.runtime.talos.dev", 7},
    {"FSScrubSchedules.block.talos.dev", 14},
    {"FSScrubStatuses.block.talos.dev", 14},
    {"HostDNSConfigs.net.talos.dev", 7},
    {"ImageCacheConfigs.cri.talos.dev", 9},
    {"ImageFactorySchematics.runtime.talos.dev", 14},
    {"ImageVerificationRules.security.talos.dev", 13},
    {"KernelCmdlines.runtime.talos.dev", 11},
    {"KernelModuleStatuses.runtime.talos.dev", 14},
    {"KubeletKubeconfigs.kubernetes.talos.dev", 13},
    {"KubeletStatuses.kubernetes.talos.dev", 14},
    {"LVMLogicalVolumeSpecs.storage.talos.dev", 14},
    {"LVMLogicalVolumeStatuses.storage.talos.dev", 14},
    {"LVMPhysicalVolumeSpecs.storage.talos.dev", 14},
    {"LVMPhysicalVolumeStatuses.storage.talos.dev", 14},
    {"LVMRefreshRequests.storage.talos.dev", 14},
    {"LVMValidationErrors.storage.talos.dev", 14},
    {"LVMVolumeGroupSpecs.storage.talos.dev", 14},
    {"LVMVolumeGroupStatuses.storage.talos.dev", 14},
    {"LinkAliasSpecs.net.talos.dev", 12},
    {"LoadedKernelModules.runtime.talos.dev", 11},
    {"MDArraySpecs.storage.talos.dev", 14},
    {"MDArrayStatuses.storage.talos.dev", 14},
    {"MDRefreshRequests.storage.talos.dev", 14},
    {"MachineResetSignals.runtime.talos.dev", 6},
    {"MetaLoads.runtime.talos.dev", 6},
    {"MountRequests.block.talos.dev", 10},
    {"MountStatuses.block.talos.dev", 10},
    {"NTPStatuses.v1alpha1.talos.dev", 15},
    {"NfTablesChains.net.talos.dev", 6},
    {"NodeAddressSortAlgorithms.net.talos.dev", 9},
    {"NodeAnnotationSpecs.k8s.talos.dev", 8},
    {"OOMActions.talos.dev", 12},
    {"PCIDevices.hardware.talos.dev", 8},
    {"PCIDriverRebindConfigs.runtime.talos.dev", 10},
    {"PCIDriverRebindStatuses.runtime.talos.dev", 10},
    {"PCRStatuses.hardware.talos.dev", 10},
    {"PlatformConfigs.net.talos.dev", 12},
    {"RebootRequests.runtime.talos.dev", 14},
    {"RegistryConfigs.cri.talos.dev", 9},
    {"RoutingRuleSpecs.net.talos.dev", 13},
    {"RoutingRuleStatuses.net.talos.dev", 13},
    {"SBOMItems.talos.dev", 11},
    {"ServicePIDs.runtime.talos.dev", 13},
    {"SiderolinkStatuses.siderolink.talos.dev", 8},
    {"SiderolinkTunnels.siderolink.talos.dev", 7},
    {"StaticHosts.net.talos.dev", 14},
    {"SwapStatuses.block.talos.dev", 11},
    {"SystemDisks.block.talos.dev", 8},
    {"TUFTrustedRoots.security.talos.dev", 13},
    {"UnattendedInstallStatuses.runtime.talos.dev", 14},
    {"UniqueMachineTokens.runtime.talos.dev", 6},
    {"UserDiskConfigStatuses.block.talos.dev", 8},
    {"Versions.runtime.talos.dev", 10},
    {"VolumeConfigs.block.talos.dev", 8},
    {"VolumeLifecycles.block.talos.dev", 8},
    {"VolumeMountRequests.block.talos.dev", 10},
    {"VolumeMountStatuses.block.talos.dev", 10},
    {"VolumeStatuses.block.talos.dev", 8},
    {"VolumeTrimSchedules.block.talos.dev", 14},
    {"WatchdogTimerConfigs.runtime.talos.dev", 7},
    {"WatchdogTimerStatuses.runtime.talos.dev", 7},
    {"ZswapStatuses.block.talos.dev", 11},
};

// Types upstream dropped (not in kTypes): defined from 1.5 until the minor given.
struct RemovedIn {
  std::string_view type;
  int minor;
};
constexpr RemovedIn kRemovedIn[] = {{"MaintenanceServiceCertificates.secrets.talos.dev", 13}};

// The namespaces machined registers (internal/app/machined/pkg/runtime/v1alpha2/v1alpha2_state.go,
// plus COSI's own "meta"), the same from 1.7 to 1.12; "security" from 1.13, "containers" and
// "storage" from 1.14.
constexpr std::string_view kNamespaces[] = {
    "cluster", "cluster-raw", "config",  "controlplane",   "cri",  "etcd",    "files",   "hardware",
    "k8s",     "kubespan",    "meta",    "network",        "network-config", "perf",    "runtime",
    "secrets"};

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

bool KnownCosiNamespace(std::string_view ns, int talos_minor) {
  if (ns == "security") return talos_minor >= 13;
  if (ns == "containers" || ns == "storage") return talos_minor >= 14;
  return std::find(std::begin(kNamespaces), std::end(kNamespaces), ns) != std::end(kNamespaces);
}

bool KnownCosiType(std::string_view type, int talos_minor) {
  // apid looks the type up among the resource definitions by its lower-case form.
  const auto same = [&](std::string_view known) { return EqualsIgnoringCase(known, type); };
  for (const RemovedIn& removed : kRemovedIn) {
    if (same(removed.type)) return talos_minor < removed.minor;
  }
  if (std::none_of(std::begin(kTypes), std::end(kTypes), same)) return false;
  const auto added = std::find_if(std::begin(kAddedIn), std::end(kAddedIn),
                                  [&](const AddedIn& a) { return same(a.type); });
  return added == std::end(kAddedIn) || talos_minor >= added->minor;
}

}  // namespace tr::sim
