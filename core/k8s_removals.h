// What a Kubernetes minor upgrade removes and an upgrade must refuse while still in use: feature
// gates, command-line flags of the control-plane components and the kubelet, kube-apiserver
// admission plugins, and API resources. The built-in table (core/k8s_removal_table.cc) covers
// every upgrade path 1.24→1.25 through 1.37→1.38, from siderolabs/go-kubernetes
// `kubernetes/upgrade/checks.go` (the table `talosctl upgrade-k8s` checks); upstream marks the
// 1.35→1.36 and 1.36→1.37 lists provisional and has none yet for 1.37→1.38.
//
// Pure functions over values; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/version.h"

namespace tr::core {

// An API resource served under /apis/<group>/<version>/<resource>.
struct RemovedApiResource {
  std::string group;
  std::string version;
  std::string resource;

  // "/apis/resource.k8s.io/v1alpha3/podschedulingcontexts"
  std::string ListPath() const;
  // "podschedulingcontexts.v1alpha3.resource.k8s.io"
  std::string Name() const;
};

struct KubernetesRemovals {
  std::vector<std::string> feature_gates;    // kube-apiserver, -controller-manager, -scheduler
  std::vector<std::string> apiserver_flags;  // without the leading "--"
  std::vector<std::string> controller_manager_flags;
  std::vector<std::string> kubelet_flags;
  // kube-apiserver refuses to start when --enable-admission-plugins or
  // --disable-admission-plugins names a plugin it does not know.
  std::vector<std::string> admission_plugins;
  std::vector<RemovedApiResource> api_resources;
};

// What upgrading from minor `from` to `to` (one minor apart) removes; empty when unknown.
KubernetesRemovals RemovalsForUpgrade(MinorVersion from, MinorVersion to);

// The table's entry for the path `from` → `to`; nullopt when the table has none (not one minor
// apart, or outside the minors it covers). An entry may be empty: nothing is listed as removed.
std::optional<KubernetesRemovals> RemovalTableEntry(MinorVersion from, MinorVersion to);

// The removed flags, feature gates and admission plugins that the command line `args` of a
// component still uses, one message each ("flag --cloud-config", "feature gate CPUManager",
// "admission plugin SecurityContextDeny in --enable-admission-plugins"). `flags` are the removed
// flags of that component; `gates` the removed feature gates (empty for the kubelet);
// `admission_plugins` the removed admission plugins (kube-apiserver only).
std::vector<std::string> RemovedItemsInArgs(const std::vector<std::string>& args,
                                            const std::vector<std::string>& flags,
                                            const std::vector<std::string>& gates,
                                            const std::vector<std::string>& admission_plugins = {});

}  // namespace tr::core
