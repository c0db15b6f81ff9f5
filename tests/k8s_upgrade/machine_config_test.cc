#include "reconciler/operations/k8s_upgrade/machine_config.h"

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

// Documents before and after the v1alpha1 one, written the way people write them (comments,
// flow style, quoting, a block scalar with a `---` inside), come back byte for byte.
TEST(MachineConfigTest, PatchingKeepsTheOtherDocumentsByteForByte) {
  const std::string before =
      "# firewall first\napiVersion: v1alpha1\nkind: NetworkDefaultActionConfig\n"
      "ingress:   block   # deny\n";
  const std::string after =
      "--- # kubelet ingress\napiVersion: v1alpha1\nkind: NetworkRuleConfig\n"
      "name: 'kubelet-ingress'\nportSelector: {ports: [10250], protocol: tcp}\n"
      "ingress:\n  - subnet: \"10.0.0.0/8\"\n---\napiVersion: v1alpha1\nkind: "
      "ExtensionServiceConfig\nname: banner\nconfigFiles:\n  - mountPath: /etc/banner\n"
      "    content: |\n      ---\n      hello\n";
  const std::string v1alpha1 =
      "---\nversion: v1alpha1\nmachine:\n  kubelet:\n    image: "
      "ghcr.io/siderolabs/kubelet:v1.34.1\n";
  auto patched = WithImage(before + v1alpha1 + after, Component::kKubelet,
                           "ghcr.io/siderolabs/kubelet:v1.35.0");
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_TRUE(patched->starts_with(before + "---\n")) << *patched;
  EXPECT_TRUE(patched->ends_with(after)) << *patched;
  EXPECT_EQ(ConfiguredImage(*patched, Component::kKubelet).value(),
            "ghcr.io/siderolabs/kubelet:v1.35.0");
  // The YAML error's line counts from the top of the whole configuration.
  auto bad = ConfiguredImage(before + v1alpha1 + "---\nkind: [unclosed\n", Component::kKubelet);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
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

TEST(KubernetesRemovalsTest, FindsRemovedAdmissionPluginsInEitherList) {
  const core::KubernetesRemovals r = core::RemovalsForUpgrade({1, 29}, {1, 30});
  const std::vector<std::string> args = {"--enable-admission-plugins=NodeRestriction",
                                         "--disable-admission-plugins=SecurityContextDeny"};
  EXPECT_EQ(core::RemovedItemsInArgs(args, r.apiserver_flags, r.feature_gates, r.admission_plugins),
            (std::vector<std::string>{
                "admission plugin SecurityContextDeny in --disable-admission-plugins"}));
  EXPECT_TRUE(core::RemovalsForUpgrade({1, 30}, {1, 31}).admission_plugins ==
              std::vector<std::string>{"PersistentVolumeLabel"});
}

TEST(MachineConfigTest, ReadsExtraArgsAsFlags) {
  const std::string config =
      "version: v1alpha1\nmachine:\n  kubelet:\n    extraArgs:\n      rotate-certificates: "
      "true\ncluster:\n  apiServer:\n    extraArgs:\n      feature-gates: [A=true, B=false]\n";
  EXPECT_EQ(ConfiguredExtraArgs(config, Component::kApiServer).value(),
            std::vector<std::string>{"--feature-gates=A=true,B=false"});
  EXPECT_EQ(ConfiguredExtraArgs(config, Component::kKubelet).value(),
            std::vector<std::string>{"--rotate-certificates=true"});
  EXPECT_TRUE(ConfiguredExtraArgs(config, Component::kScheduler).value().empty());
  EXPECT_EQ(ExtraArgsPath(Component::kControllerManager), "cluster.controllerManager.extraArgs");
}

}  // namespace
}  // namespace tr::reconciler::k8s_upgrade
