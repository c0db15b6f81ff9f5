// Where a simulated node's machine configuration keeps its Kubernetes components, and the
// validation Talos runs on every applied configuration for them.
//
// Facts (siderolabs/talos v1.14.0-rc.1, read for docs/talos-sim.md):
//  - pkg/machinery/config/generate/{init.go,worker.go,kubernetes.go}: from the 1.14 contract
//    (contract.go MultidocKubernetesConfigSupported, UnattendedInstallConfig: contracts > 1.13)
//    `talosctl gen config` writes no .machine.kubelet, .cluster.apiServer,
//    .cluster.controllerManager, .cluster.scheduler, .cluster.proxy, .cluster.controlPlane,
//    .cluster.clusterName nor .machine.install; it writes the documents KubeletConfig (every
//    node), KubeAPIServerConfig, KubeControllerManagerConfig, KubeSchedulerConfig,
//    KubeProxyConfig (control planes), KubeClusterConfig and UnattendedInstallConfig.
//  - pkg/machinery/config/types/k8s/{apiserver,controller_manager,scheduler,proxy,kubelet}.go:
//    each document refuses its v1alpha1 section beside it (V1Alpha1ConflictValidate) and an
//    empty image (Validate, skipped when `enabled: false`); the four control-plane documents
//    are allowed on control planes only. types/runtime/unattended_install.go refuses
//    .machine.install beside UnattendedInstallConfig.
//  - pkg/machinery/config/container/validate.go: document errors ("<Kind>: <error>"), then the
//    conflicts, then the container checks, joined as one hashicorp multierror; the machined
//    ApplyConfiguration answers InvalidArgument with its text.
//
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/version.h"
#include "tests/sim/catalog/fleet_spec.h"

namespace tr::sim {

// One Kubernetes component: its document and its v1alpha1 section.
struct ComponentPlace {
  const char* component;  // "kube-apiserver", ..., the key of SimNode::images
  const char* kind;       // "KubeAPIServerConfig", ...
  const char* section;    // "cluster" or "machine"
  const char* key;        // "apiServer", ...
  bool control_plane_only;
};

// The five components, in upgrade order.
std::span<const ComponentPlace> ComponentPlaces();

// Whether `shape` on Talos `talos` keeps `component` in its document.
bool InDocument(ConfigShape shape, core::MinorVersion talos, std::string_view component);

// Whether `shape` on Talos `talos` is the 1.14 generated one (UnattendedInstallConfig and
// KubeClusterConfig instead of .machine.install and .cluster.{clusterName,controlPlane}).
bool GeneratedMultidoc(ConfigShape shape, core::MinorVersion talos);

// The document of `place` holding `image`, opened with "---".
std::string ComponentDocument(const ComponentPlace& place, const std::string& image);

// What the simulator takes from a configuration it is given.
struct ConfigContents {
  std::map<std::string, std::string> images;  // component -> image, from wherever it is set
  std::string reboot_fields;  // YAML of machine.type + machine.install: a change needs a reboot
};

// Parses and validates `data` as Talos does for ApplyConfiguration: InvalidArgument with
// Talos's text for a YAML error, no v1alpha1 document, no machine section, a component set in
// its document and in v1alpha1, an empty component image, a control-plane document on a worker,
// .machine.install beside UnattendedInstallConfig.
absl::StatusOr<ConfigContents> ReadConfig(const std::string& data);

}  // namespace tr::sim
