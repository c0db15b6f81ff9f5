#include "core/k8s_removals.h"

#include <gtest/gtest.h>

#include <set>

#include "core/support_matrix.h"

namespace tr::core {
namespace {

// Every Kubernetes minor `matrix` knows whose path from the minor before it has no entry in the
// removal table. The oldest minor has no path into it.
std::vector<MinorVersion> MinorsWithoutRemovalEntry(const SupportMatrix& matrix) {
  std::set<MinorVersion> known;
  for (MinorVersion talos : matrix.TalosMinors()) {
    const SupportMatrixEntry row = *matrix.Find(talos);
    for (MinorVersion k = row.kubernetes_min; k <= row.kubernetes_max; k = k.Next()) {
      known.insert(k);
    }
  }
  std::vector<MinorVersion> missing;
  for (MinorVersion k : known) {
    if (k == *known.begin()) continue;
    if (!RemovalTableEntry({k.major, k.minor - 1}, k)) missing.push_back(k);
  }
  return missing;
}

// Whoever teaches the support matrix a new Kubernetes minor must also say what upgrading to it
// removes (an empty entry when nothing is listed upstream yet), or this fails.
TEST(KubernetesRemovalsTest, TableHasAnEntryForEveryKubernetesMinorTheMatrixKnows) {
  for (MinorVersion k : MinorsWithoutRemovalEntry(SupportMatrix::BuiltIn())) {
    ADD_FAILURE() << "the support matrix knows Kubernetes " << k.ToString()
                  << " but core/k8s_removal_table.cc has no entry for "
                  << MinorVersion{k.major, k.minor - 1}.ToString() << " -> " << k.ToString();
  }
}

TEST(KubernetesRemovalsTest, AMatrixRowPastTheTableIsReportedMissing) {
  SupportMatrix matrix = SupportMatrix::BuiltIn();
  matrix.Set({.talos = {1, 16},
              .kubernetes_min = {1, 34},
              .kubernetes_max = {1, 39},
              .minimum_upgrade_from = *ParseTalosVersion("1.14.0")});
  EXPECT_EQ(MinorsWithoutRemovalEntry(matrix), (std::vector<MinorVersion>{{1, 39}}));
}

TEST(KubernetesRemovalsTest, NoEntryForAPathThatIsNotOneMinor) {
  EXPECT_FALSE(RemovalTableEntry({1, 35}, {1, 37}).has_value());
  EXPECT_FALSE(RemovalTableEntry({1, 36}, {1, 36}).has_value());
  EXPECT_FALSE(RemovalTableEntry({1, 23}, {1, 24}).has_value());
  EXPECT_FALSE(RemovalTableEntry({1, 38}, {1, 39}).has_value());
  EXPECT_TRUE(RemovalsForUpgrade({1, 35}, {1, 37}).feature_gates.empty());
}

TEST(KubernetesRemovalsTest, From135To136RemovesFourFeatureGates) {
  const KubernetesRemovals r = RemovalsForUpgrade({1, 35}, {1, 36});
  EXPECT_EQ(r.feature_gates,
            (std::vector<std::string>{"CSIMigrationPortworx", "HonorPVReclaimPolicy",
                                      "InTreePluginPortworxUnregister",
                                      "WatchFromStorageWithoutResourceVersion"}));
  EXPECT_TRUE(r.kubelet_flags.empty());
  EXPECT_TRUE(r.api_resources.empty());
}

TEST(KubernetesRemovalsTest, From136To137RemovesGatesApisAndTheKubeletsCadvisorFlags) {
  const KubernetesRemovals r = RemovalsForUpgrade({1, 36}, {1, 37});
  EXPECT_EQ(r.feature_gates.size(), 5u);
  EXPECT_EQ(r.kubelet_flags.size(), 18u);
  ASSERT_EQ(r.api_resources.size(), 2u);
  EXPECT_EQ(r.api_resources[0].Name(), "workloads.v1alpha2.scheduling.k8s.io");
  EXPECT_EQ(r.api_resources[1].ListPath(), "/apis/scheduling.k8s.io/v1alpha2/podgroups");
  // A flag is matched by its whole name: --containerd-namespace is not --containerd.
  const std::vector<std::string> kubelet = {"--containerd-namespace=k8s.io",
                                            "--storage-driver-db=cadvisor", "--v=2"};
  EXPECT_EQ(RemovedItemsInArgs(kubelet, r.kubelet_flags, {}),
            (std::vector<std::string>{"flag --containerd-namespace", "flag --storage-driver-db"}));
  const std::vector<std::string> apiserver = {"--feature-gates=GangScheduling=true,Foo=false"};
  EXPECT_EQ(RemovedItemsInArgs(apiserver, r.apiserver_flags, r.feature_gates),
            (std::vector<std::string>{"feature gate GangScheduling"}));
}

TEST(KubernetesRemovalsTest, From137To138IsAnEmptyEntryUntilUpstreamListsOne) {
  const std::optional<KubernetesRemovals> r = RemovalTableEntry({1, 37}, {1, 38});
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->feature_gates.empty() && r->kubelet_flags.empty() && r->api_resources.empty());
}

TEST(KubernetesRemovalsTest, ControllerManagerFlagsAreListedApart) {
  const KubernetesRemovals r = RemovalsForUpgrade({1, 30}, {1, 31});
  const std::vector<std::string> args = {"--horizontal-pod-autoscaler-upscale-delay=3m"};
  EXPECT_EQ(RemovedItemsInArgs(args, r.controller_manager_flags, r.feature_gates),
            (std::vector<std::string>{"flag --horizontal-pod-autoscaler-upscale-delay"}));
  EXPECT_TRUE(RemovedItemsInArgs(args, r.apiserver_flags, r.feature_gates).empty());
}

}  // namespace
}  // namespace tr::core
