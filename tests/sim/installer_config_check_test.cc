// The installer's refusal of configuration documents its Talos version does not know
// (tests/sim/catalog/installer_config_check.h), pinned to talos v1.13.9's config loader text.
#include "tests/sim/catalog/installer_config_check.h"

#include <gtest/gtest.h>

namespace tr::sim {
namespace {

constexpr char kConfig114[] =
    "version: v1alpha1\n"        // 1
    "machine:\n"                 // 2
    "  type: worker\n"           // 3
    "cluster: {}\n"              // 4
    "---\n"                      // 5
    "apiVersion: v1alpha1\n"     // 6
    "kind: NetworkRuleConfig\n"  // 7
    "name: ingress\n"            // 8
    "---\n"                      // 9
    "# the kubelet\n"            // 10
    "apiVersion: v1alpha1\n"     // 11
    "kind: KubeletConfig\n"      // 12
    "image: ghcr.io/siderolabs/kubelet:v1.37.0\n"
    "---\n"
    "apiVersion: v1alpha1\n"
    "kind: KubeProxyConfig\n";

TEST(InstallerConfigCheckTest, AnOlderInstallerRefusesTheFirstDocumentItDoesNotKnow) {
  EXPECT_EQ(InstallerConfigLoadError(kConfig114, {1, 13}),
            "error loading machine configuration: error decoding document "
            "v1alpha1/KubeletConfig/ (line 11): \"KubeletConfig\" \"v1alpha1\": not registered");
}

TEST(InstallerConfigCheckTest, AnInstallerThatKnowsEveryDocumentLoadsIt) {
  EXPECT_EQ(InstallerConfigLoadError(kConfig114, {1, 14}), "");
  EXPECT_EQ(InstallerConfigLoadError("version: v1alpha1\nmachine:\n  type: worker\n", {1, 12}), "");
}

TEST(InstallerConfigCheckTest, ImageVerificationConfigIsUnknownBefore113) {
  const std::string config =
      "version: v1alpha1\n---\napiVersion: v1alpha1\nkind: ImageVerificationConfig\nrules: []\n";
  EXPECT_EQ(InstallerConfigLoadError(config, {1, 13}), "");
  EXPECT_EQ(InstallerConfigLoadError(config, {1, 12}),
            "error loading machine configuration: error decoding document "
            "v1alpha1/ImageVerificationConfig/ (line 3): \"ImageVerificationConfig\" "
            "\"v1alpha1\": not registered");
}

}  // namespace
}  // namespace tr::sim
