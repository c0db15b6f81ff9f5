// machine_config.h on configurations that keep components in their own documents (Talos 1.14
// `talosctl gen config`) or partly so: read and patched where each node keeps them.
#include <gtest/gtest.h>

#include "reconciler/operations/k8s_upgrade/machine_config.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

// A partly migrated control plane: the kubelet in KubeletConfig, the rest in v1alpha1.
constexpr const char* kPartly = R"(version: v1alpha1
machine:
  type: controlplane
  token: secret-token-123
cluster:
  apiServer:
    image: registry.k8s.io/kube-apiserver:v1.36.3
    extraArgs:
      feature-gates: A=true
  controllerManager:
    image: registry.k8s.io/kube-controller-manager:v1.36.3
  scheduler:
    image: registry.k8s.io/kube-scheduler:v1.36.3
  proxy:
    image: registry.k8s.io/kube-proxy:v1.36.3
--- # migrated by hand
apiVersion: v1alpha1
kind: KubeletConfig
image: ghcr.io/siderolabs/kubelet:v1.36.3
extraArgs:
  housekeeping-interval: 10s
  feature-gates: [B=false, C=true]
---
apiVersion: v1alpha1
kind: HostnameConfig
hostname: cp-1
)";

TEST(MachineConfigDocumentsTest, ReadsEachComponentWhereTheNodeKeepsIt) {
  EXPECT_EQ(PlaceOf(kPartly, Component::kKubelet).value(), ConfigPlace::kDocument);
  EXPECT_EQ(PlaceOf(kPartly, Component::kApiServer).value(), ConfigPlace::kV1Alpha1);
  EXPECT_EQ(ConfiguredImage(kPartly, Component::kKubelet).value(),
            "ghcr.io/siderolabs/kubelet:v1.36.3");
  EXPECT_EQ(
      ConfiguredExtraArgs(kPartly, Component::kKubelet).value(),
      (std::vector<std::string>{"--housekeeping-interval=10s", "--feature-gates=B=false,C=true"}));
  EXPECT_EQ(ConfiguredExtraArgs(kPartly, Component::kApiServer).value(),
            std::vector<std::string>{"--feature-gates=A=true"});
  EXPECT_EQ(ExtraArgsPath(Component::kKubelet, ConfigPlace::kDocument), "KubeletConfig.extraArgs");
  EXPECT_EQ(ExtraArgsPath(Component::kApiServer, ConfigPlace::kV1Alpha1),
            "cluster.apiServer.extraArgs");
  EXPECT_EQ(ConfigShape(kPartly, true).value(),
            "mixed (documents: kubelet; v1alpha1: kube-apiserver, kube-controller-manager, "
            "kube-scheduler, kube-proxy)");
  EXPECT_EQ(ConfigShape(kPartly, false).value(), "documents");
}

TEST(MachineConfigDocumentsTest, PatchesTheDocumentAndKeepsTheRestByteForByte) {
  const std::string config = kPartly;
  auto patched = WithImage(config, Component::kKubelet, "ghcr.io/siderolabs/kubelet:v1.37.0");
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ(ConfiguredImage(*patched, Component::kKubelet).value(),
            "ghcr.io/siderolabs/kubelet:v1.37.0");
  // No machine.kubelet appears: Talos would refuse the component set twice.
  EXPECT_EQ(PlaceOf(*patched, Component::kKubelet).value(), ConfigPlace::kDocument);
  const size_t kubelet_doc = config.find("--- # migrated by hand");
  const size_t hostname_doc = config.find("---\napiVersion: v1alpha1\nkind: HostnameConfig");
  EXPECT_TRUE(patched->starts_with(config.substr(0, kubelet_doc))) << *patched;
  EXPECT_TRUE(patched->ends_with(config.substr(hostname_doc))) << *patched;
  EXPECT_EQ(ConfiguredExtraArgs(*patched, Component::kKubelet).value().size(), 2u);
  auto apiserver =
      WithImage(config, Component::kApiServer, "registry.k8s.io/kube-apiserver:v1.37.0");
  ASSERT_TRUE(apiserver.ok());
  EXPECT_EQ(PlaceOf(*apiserver, Component::kApiServer).value(), ConfigPlace::kV1Alpha1);
  EXPECT_EQ(ConfiguredImage(*apiserver, Component::kApiServer).value(),
            "registry.k8s.io/kube-apiserver:v1.37.0");
  EXPECT_TRUE(apiserver->ends_with(config.substr(kubelet_doc))) << *apiserver;
}

TEST(MachineConfigDocumentsTest, TellsWhatCannotBePatched) {
  const std::string twice =
      std::string(kPartly).replace(std::string(kPartly).find("cluster:\n"), 9,
                                   "  kubelet:\n    image: ghcr.io/siderolabs/kubelet:v1.36.3\n"
                                   "cluster:\n");
  for (Component c : ComponentsOf(true)) EXPECT_TRUE(CheckPatchable(kPartly, c).ok());
  const absl::Status set_twice = CheckPatchable(twice, Component::kKubelet);
  EXPECT_EQ(set_twice.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(set_twice.message(),
            "set twice, in the KubeletConfig document and in machine.kubelet (Talos refuses "
            "that): keep one");
  const std::string no_image =
      std::string(kPartly).replace(std::string(kPartly).find("image: ghcr"), 5, "label");
  EXPECT_EQ(CheckPatchable(no_image, Component::kKubelet).message(),
            "no image in the KubeletConfig document");
  const std::string worker = "version: v1alpha1\nmachine:\n  type: worker\n";
  EXPECT_EQ(CheckPatchable(worker, Component::kKubelet).message(),
            "no image configured (neither a KubeletConfig document nor machine.kubelet)");
  EXPECT_EQ(CheckPatchable(worker, Component::kKubelet).message().find("secret"),
            std::string::npos);
}

}  // namespace
}  // namespace tr::reconciler::k8s_upgrade
