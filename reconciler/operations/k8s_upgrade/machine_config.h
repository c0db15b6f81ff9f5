// The Kubernetes components of a Talos machine configuration (a possibly multi-document
// YAML): where each is kept, reading its image and extraArgs there, and writing its image back
// into the whole configuration, as `talosctl upgrade-k8s` patches it.
//
// A component lives in one of two places (siderolabs/talos v1.14.0-rc.1,
// pkg/machinery/config/generate/stdpatches/guess.go): its own document (KubeAPIServerConfig,
// KubeControllerManagerConfig, KubeSchedulerConfig, KubeProxyConfig, KubeletConfig; written by
// `talosctl gen config` from Talos 1.14) when the configuration has one, else its v1alpha1
// section (cluster.apiServer, cluster.controllerManager, cluster.scheduler, cluster.proxy,
// machine.kubelet). Talos refuses a configuration that sets a component in both
// (types/k8s/*.go V1Alpha1ConflictValidate). Each node's configuration is read on its own: a
// cluster can be partly migrated.
//
// The configuration holds secrets: no message here quotes it. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::reconciler::k8s_upgrade {

// The Kubernetes components an upgrade changes, in upgrade order.
enum class Component { kApiServer, kControllerManager, kScheduler, kKubeProxy, kKubelet };

// "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubelet".
std::string_view ComponentName(Component component);

// The components a node runs, in upgrade order: every one on a control plane, the kubelet on
// a worker.
std::vector<Component> ComponentsOf(bool control_plane);

// Where a configuration keeps a component.
enum class ConfigPlace {
  kNone,      // neither its document nor its v1alpha1 section
  kV1Alpha1,  // its v1alpha1 section only
  kDocument,  // its own document only
  kBoth,      // both: Talos refuses such a configuration
};

// The document kind: "KubeAPIServerConfig", ..., "KubeletConfig".
std::string_view DocumentKind(Component component);

// The v1alpha1 section: "cluster.apiServer", ..., "machine.kubelet".
std::string V1Alpha1Section(Component component);

// Where `config_yaml` keeps `component`. InvalidArgument when the YAML does not parse or has
// no v1alpha1 document.
absl::StatusOr<ConfigPlace> PlaceOf(const std::string& config_yaml, Component component);

// OK when `component` can be patched in `config_yaml`: kept in exactly one place, with an
// image there. FailedPrecondition saying what is wrong otherwise; errors of PlaceOf.
absl::Status CheckPatchable(const std::string& config_yaml, Component component);

// The image configured for `component` where the configuration keeps it (its document when
// present, else its v1alpha1 section); "" when absent. Errors as PlaceOf.
absl::StatusOr<std::string> ConfiguredImage(const std::string& config_yaml, Component component);

// The command-line flags `component`'s extraArgs add, read where the image is read
// ("--name=value", a list value joined with commas); empty when there are none.
absl::StatusOr<std::vector<std::string>> ConfiguredExtraArgs(const std::string& config_yaml,
                                                             Component component);

// Where those are, for a message: "KubeletConfig.extraArgs" for a component kept in its
// document, else "machine.kubelet.extraArgs", "cluster.apiServer.extraArgs", ...
std::string ExtraArgsPath(Component component, ConfigPlace place);
// The v1alpha1 one: ExtraArgsPath(component, ConfigPlace::kV1Alpha1).
std::string ExtraArgsPath(Component component);

// How a node's configuration keeps the components a node of its role runs: "v1alpha1" (all
// in v1alpha1 sections), "documents" (all in their documents), or "mixed (documents:
// kubelet; v1alpha1: kube-apiserver, ...)". Errors as PlaceOf.
absl::StatusOr<std::string> ConfigShape(const std::string& config_yaml, bool control_plane);

// The whole configuration with `component`'s image set to `image` where the configuration
// keeps it (its document when present, else its v1alpha1 section); only that document is
// written anew, the others come back byte for byte.
absl::StatusOr<std::string> WithImage(const std::string& config_yaml, Component component,
                                      const std::string& image);

// The installer image the configuration installs from: the UnattendedInstallConfig document's
// installer.image when it has one (Talos 1.14), else v1alpha1's machine.install.image; "" when
// neither is set. Errors as PlaceOf.
absl::StatusOr<std::string> InstallerImage(const std::string& config_yaml);

// `image` ("registry.k8s.io/kube-apiserver:v1.34.1", "ghcr.io/siderolabs/kubelet:v1.34.1-fat")
// retagged to Kubernetes `version` ("1.35.0"), keeping its repository and a -fat/-slim suffix.
std::string RetaggedImage(const std::string& image, const std::string& version);

// The Kubernetes version an image's tag names ("1.34.1"), or "" when the tag is not one.
std::string ImageKubernetesVersion(const std::string& image);

}  // namespace tr::reconciler::k8s_upgrade
