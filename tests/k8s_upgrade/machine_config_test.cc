#include "reconciler/k8s_upgrade/machine_config.h"

#include <gtest/gtest.h>

#include "core/k8s_removals.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

constexpr const char* kConfig = R"(version: v1alpha1
machine:
  type: controlplane
  token: secret-token-123
  kubelet:
    image: ghcr.io/siderolabs/kubelet:v1.34.1-fat
cluster:
  apiServer:
    image: registry.k8s.io/kube-apiserver:v1.34.1
---
apiVersion: v1alpha1
kind: HostnameConfig
hostname: cp-1
)";

TEST(MachineConfigTest, ReadsAndPatchesImagesKeepingOtherDocuments) {
  EXPECT_EQ(ConfiguredImage(kConfig, Component::kApiServer).value(),
            "registry.k8s.io/kube-apiserver:v1.34.1");
  EXPECT_EQ(ConfiguredImage(kConfig, Component::kScheduler).value(), "");
  auto patched = WithImage(kConfig, Component::kKubelet, "ghcr.io/siderolabs/kubelet:v1.35.0-fat");
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ(ConfiguredImage(*patched, Component::kKubelet).value(),
            "ghcr.io/siderolabs/kubelet:v1.35.0-fat");
  EXPECT_EQ(ConfiguredImage(*patched, Component::kApiServer).value(),
            "registry.k8s.io/kube-apiserver:v1.34.1");
  EXPECT_NE(patched->find("kind: HostnameConfig"), std::string::npos);
  EXPECT_NE(patched->find("secret-token-123"), std::string::npos);
}

TEST(MachineConfigTest, ErrorsDoNotQuoteTheConfiguration) {
  auto bad = ConfiguredImage("machine: {token: secret-token-123\n", Component::kKubelet);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().find("secret-token-123"), std::string::npos);
  EXPECT_EQ(ConfiguredImage("kind: HostnameConfig\n", Component::kKubelet).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MachineConfigTest, RetagsKeepingRepositoryAndSuffix) {
  EXPECT_EQ(RetaggedImage("mirror.local:5000/kube-scheduler:v1.34.1", "1.35.0"),
            "mirror.local:5000/kube-scheduler:v1.35.0");
  EXPECT_EQ(RetaggedImage("ghcr.io/siderolabs/kubelet:v1.34.1-slim", "1.35.0"),
            "ghcr.io/siderolabs/kubelet:v1.35.0-slim");
  EXPECT_EQ(ImageKubernetesVersion("ghcr.io/siderolabs/kubelet:v1.34.1-fat"), "1.34.1");
  EXPECT_EQ(ImageKubernetesVersion("mirror.local:5000/kube-scheduler"), "");
}

TEST(KubernetesRemovalsTest, FindsRemovedFlagsAndFeatureGatesInArgs) {
  const core::KubernetesRemovals r = core::RemovalsForUpgrade({1, 32}, {1, 33});
  const std::vector<std::string> args = {"/usr/local/bin/kube-apiserver", "--cloud-config=/x",
                                         "--feature-gates=Foo=true,CPUManager=false"};
  EXPECT_EQ(core::RemovedItemsInArgs(args, r.apiserver_flags, r.feature_gates),
            (std::vector<std::string>{"flag --cloud-config", "feature gate CPUManager"}));
  EXPECT_TRUE(core::RemovalsForUpgrade({1, 32}, {1, 34}).feature_gates.empty());
  EXPECT_EQ(core::RemovalsForUpgrade({1, 31}, {1, 32}).api_resources.at(0).ListPath(),
            "/apis/resource.k8s.io/v1alpha3/podschedulingcontexts");
}

}  // namespace
}  // namespace tr::reconciler::k8s_upgrade
