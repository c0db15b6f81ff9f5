// The bootstrap manifests synced as Talos does (manifest_sync.h), against talos-sim (real gRPC
// over mTLS, its Kubernetes API over HTTPS): owned by field manager `talos` and listed in
// Talos's inventory afterwards; an object that left the manifests (kube-proxy once
// cluster.proxy.disabled) pruned, or kept with pruning off; another inventory's object refused;
// a rollout that does not finish named in the failure.
#include <gtest/gtest.h>

#include "reconciler/operations/k8s_upgrade/k8s_upgrade.h"
#include "reconciler/operations/k8s_upgrade/manifest_objects.h"
#include "tests/k8s_upgrade/upgrade_fixture.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

using nlohmann::json;

constexpr char kProxyPath[] = "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy";
constexpr char kCoreDnsPath[] = "/apis/apps/v1/namespaces/kube-system/deployments/coredns";
constexpr char kInventoryPath[] =
    "/api/v1/namespaces/kube-system/configmaps/talos-bootstrap-manifests-inventory";
constexpr char kProxyKey[] = "kube-system_kube-proxy_apps_DaemonSet";
constexpr char kCoreDnsKey[] = "kube-system_coredns_apps_Deployment";

class ManifestSyncTest : public UpgradeFixture {
 protected:
  UpgradeOutcome RunUpgrade(const std::string& to,
                            const std::function<void(UpgradeOptions&)>& tweak = {}) {
    std::unique_ptr<kube::KubeClient> kube = Kube();
    std::unique_ptr<talos::TalosClient> client;
    NewClient("prod", &client);
    UpgradeOptions options = SimUpgradeOptions(to);
    options.manifests_timeout = std::chrono::milliseconds(1500);
    if (tweak) tweak(options);
    KubernetesUpgrade upgrade(*client, *kube, Env::Default(), options,
                              [&](const UpgradeProgress& p) { lines_.push_back(p.message); });
    return upgrade.Run({});
  }

  json Object(const std::string& path) {
    auto text = Kube()->GetObject(path);
    EXPECT_TRUE(text.ok()) << path << ": " << text.status();
    return text.ok() ? json::parse(*text) : json();
  }

  std::set<std::string> InventoryKeysNow() { return InventoryKeys(Object(kInventoryPath)); }

  // What machined and talosctl check before touching an object: it names Talos's inventory,
  // and every field of it is Talos's (no other field manager).
  void ExpectTalosOwns(const std::string& path) {
    const json object = Object(path);
    EXPECT_EQ(object.value(
                  json::json_pointer("/metadata/annotations/config.k8s.io~1owning-inventory"), ""),
              kInventoryName)
        << path;
    EXPECT_TRUE(AppliedByTalos(object)) << object.dump();
    for (const json& entry : object["metadata"]["managedFields"]) {
      EXPECT_EQ(entry.value("manager", ""), "talos") << path << ": " << entry.dump();
    }
  }

  bool Logged(const std::string& line) {
    return std::find(lines_.begin(), lines_.end(), line) != lines_.end();
  }

  std::vector<std::string> lines_;
};

TEST_F(ManifestSyncTest, ObjectsAreTalosOwnedAndInItsInventory) {
  StartFleet(Fleet("v1.12.0", "1.34.1", ""));
  UpgradeOutcome outcome = RunUpgrade("1.35.0");
  ASSERT_TRUE(outcome.status.ok()) << outcome.status << " " << outcome.component;
  // Both are applied once: kube-proxy for its image, CoreDNS to be adopted into the inventory.
  EXPECT_EQ(outcome.manifests_applied, 2);
  ExpectTalosOwns(kProxyPath);
  ExpectTalosOwns(kCoreDnsPath);
  EXPECT_EQ(InventoryKeysNow(), (std::set<std::string>{kProxyKey, kCoreDnsKey}));

  // The next run finds nothing foreign and nothing to apply.
  UpgradeOutcome again = RunUpgrade("1.35.0");
  ASSERT_TRUE(again.status.ok()) << again.status;
  EXPECT_EQ(again.manifests_applied, 0);
  EXPECT_TRUE(Logged("manifests 2/2: Deployment kube-system/coredns already current"));
  ExpectTalosOwns(kProxyPath);
  ExpectTalosOwns(kCoreDnsPath);
}

TEST_F(ManifestSyncTest, ObjectThatLeftTheManifestsIsPruned) {
  StartFleet(Fleet("v1.12.0", "1.34.1", ""));
  ASSERT_TRUE(RunUpgrade("1.35.0").status.ok());
  DisableKubeProxy();
  UpgradeOutcome outcome = RunUpgrade("1.35.0");
  ASSERT_TRUE(outcome.status.ok()) << outcome.status << " " << outcome.component;
  EXPECT_EQ(outcome.manifests_pruned, 1);
  EXPECT_TRUE(absl::IsNotFound(Kube()->GetObject(kProxyPath).status()));
  EXPECT_EQ(InventoryKeysNow(), (std::set<std::string>{kCoreDnsKey}));
  EXPECT_TRUE(
      Logged("manifests: DaemonSet kube-system/kube-proxy pruned (no longer in the "
             "manifests)"));
  EXPECT_EQ(ManifestChanges().back(), "daemonsets/kube-proxy deleted");

  UpgradeOutcome again = RunUpgrade("1.35.0");
  ASSERT_TRUE(again.status.ok()) << again.status;
  EXPECT_EQ(again.manifests_pruned, 0);
}

TEST_F(ManifestSyncTest, WithPruningOffTheObjectStays) {
  StartFleet(Fleet("v1.12.0", "1.34.1", ""));
  ASSERT_TRUE(RunUpgrade("1.35.0").status.ok());
  DisableKubeProxy();
  UpgradeOutcome outcome =
      RunUpgrade("1.35.0", [](UpgradeOptions& o) { o.prune_manifests = false; });
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.manifests_pruned, 0);
  EXPECT_TRUE(Kube()->GetObject(kProxyPath).ok());
  // Still listed: a later run with pruning on removes it.
  EXPECT_EQ(InventoryKeysNow(), (std::set<std::string>{kProxyKey, kCoreDnsKey}));
}

TEST_F(ManifestSyncTest, ObjectOfAnotherInventoryIsRefused) {
  StartFleet(Fleet("v1.12.0", "1.34.1", ""));
  ASSERT_TRUE(Kube()
                  ->ApplyObject(kCoreDnsPath,
                                R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{)"
                                R"("name":"coredns","namespace":"kube-system","annotations":{)"
                                R"("config.k8s.io/owning-inventory":"my-gitops"}}})",
                                "flux")
                  .ok());
  UpgradeOutcome outcome = RunUpgrade("1.35.0");
  EXPECT_TRUE(absl::IsFailedPrecondition(outcome.status)) << outcome.status;
  EXPECT_EQ(outcome.component, "manifests");
  EXPECT_NE(outcome.status.message().find("Deployment kube-system/coredns belongs to the "
                                          "inventory my-gitops"),
            std::string::npos)
      << outcome.status;
  // Checked before anything is applied: kube-proxy, first in order, keeps its old image.
  EXPECT_TRUE(ManifestChanges().empty());
}

// Leader election's fence holds for the manifests too: refused there, the run changes nothing
// in Kubernetes, not even the inventory (creating it is a change).
TEST_F(ManifestSyncTest, ARefusedFenceChangesNothingInKubernetes) {
  StartFleet(Fleet("v1.12.0", "1.34.1", ""));
  size_t allowed = kAllApplies;  // every machine configuration, then no more
  UpgradeOutcome outcome = RunUpgrade("1.35.0", [&](UpgradeOptions& o) {
    o.before_change = [&]() -> absl::Status {
      if (allowed-- > 0) return absl::OkStatus();
      return absl::AbortedError("shard 0 is held by replica-b");
    };
  });
  EXPECT_TRUE(absl::IsCancelled(outcome.status)) << outcome.status;
  EXPECT_EQ(outcome.component, "manifests");
  EXPECT_EQ(TotalApplies(), kAllApplies);
  EXPECT_TRUE(absl::IsNotFound(Kube()->GetObject(kInventoryPath).status()));
  EXPECT_TRUE(ManifestChanges().empty());
}

TEST_F(ManifestSyncTest, RolloutThatDoesNotFinishIsNamed) {
  // w-1 cannot pull the new kube-proxy image: its pod of the DaemonSet never becomes Ready.
  StartFleet(Fleet("v1.12.0", "1.34.1", "", "w-1", "image_pull_failure", "kube-proxy:v1.35.0"));
  UpgradeOutcome outcome = RunUpgrade("1.35.0", [](UpgradeOptions& o) {
    o.pre_pull = false;
    o.manifests_timeout = std::chrono::milliseconds(300);
  });
  EXPECT_TRUE(absl::IsAborted(outcome.status)) << outcome.status;
  EXPECT_EQ(outcome.component, "manifests");
  EXPECT_NE(outcome.status.message().find("DaemonSet kube-system/kube-proxy"), std::string::npos)
      << outcome.status;
}

}  // namespace
}  // namespace tr::reconciler::k8s_upgrade
