// What the installer of an older Talos says about a machine configuration holding documents it
// does not know: the installer loads the node's configuration from stdin before anything else,
// and its config loader refuses a document kind it has not registered.
//
// Facts (siderolabs/talos):
//  - internal/app/lifecycle/{lifecycle.go,container.go} @ v1.14.0-rc.1: LifecycleService/Upgrade
//    runs the requested installer with the node's configuration on stdin and streams its output,
//    then its exit code, as progress messages (the gRPC status stays OK).
//  - cmd/installer/cmd/installer/{install.go,root.go} @ v1.13.9: "error loading machine
//    configuration: <err>", printed on stderr, exit code 1.
//  - pkg/machinery/config/configloader/internal/decoder/decoder.go and
//    pkg/machinery/config/internal/registry/registry.go @ v1.13.9: the first document that fails
//    is "error decoding document <apiVersion>/<kind>/<name> (line <n>): "<kind>" "<apiVersion>":
//    not registered", <n> the line of the document's first key.
//  - Which kinds each version registers: pkg/machinery/config/types/** (registry.Register) at
//    v1.13.9 and v1.14.0-rc.1: the Kubernetes documents (KubeletConfig, KubeAPIServerConfig,
//    KubeControllerManagerConfig, KubeSchedulerConfig, KubeProxyConfig, KubeClusterConfig) and
//    UnattendedInstallConfig from 1.14; ImageVerificationConfig from 1.13 (absent at v1.12.6).
//
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "core/version.h"

namespace tr::sim {

// The line the installer of Talos `installer` prints before exiting 1 for `config`; empty when
// it knows every document kind in it (kinds the simulator has no table entry for are taken as
// known).
std::string InstallerConfigLoadError(const std::string& config, core::MinorVersion installer);

}  // namespace tr::sim
