// The image fields of a Talos machine configuration (the v1alpha1 document of a possibly
// multi-document YAML): reading one, and writing one back into the whole configuration, as
// `talosctl upgrade-k8s` patches `cluster.apiServer.image`, `cluster.controllerManager.image`,
// `cluster.scheduler.image`, `cluster.proxy.image` and `machine.kubelet.image`.
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

// The image configured for `component`; "" when the field is absent. InvalidArgument when the
// YAML does not parse or has no v1alpha1 document.
absl::StatusOr<std::string> ConfiguredImage(const std::string& config_yaml, Component component);

// The command-line flags `component`'s extraArgs in the configuration add ("--name=value", a
// list value joined with commas); empty when there are none. Errors as ConfiguredImage.
absl::StatusOr<std::vector<std::string>> ConfiguredExtraArgs(const std::string& config_yaml,
                                                             Component component);

// Where those are: "cluster.apiServer.extraArgs", ..., "machine.kubelet.extraArgs".
std::string ExtraArgsPath(Component component);

// The whole configuration with `component`'s image set to `image` (other documents kept).
absl::StatusOr<std::string> WithImage(const std::string& config_yaml, Component component,
                                      const std::string& image);

// `image` ("registry.k8s.io/kube-apiserver:v1.34.1", "ghcr.io/siderolabs/kubelet:v1.34.1-fat")
// retagged to Kubernetes `version` ("1.35.0"), keeping its repository and a -fat/-slim suffix.
std::string RetaggedImage(const std::string& image, const std::string& version);

// The Kubernetes version an image's tag names ("1.34.1"), or "" when the tag is not one.
std::string ImageKubernetesVersion(const std::string& image);

}  // namespace tr::reconciler::k8s_upgrade
