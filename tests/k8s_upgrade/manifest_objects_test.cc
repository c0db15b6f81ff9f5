// The bootstrap manifests' objects as Talos applies them (manifest_objects.h): stage order,
// inventory keys both ways, the annotation, what a live object says about its owner.
#include "reconciler/operations/k8s_upgrade/manifest_objects.h"

#include <gtest/gtest.h>

namespace tr::reconciler::k8s_upgrade {
namespace {

using nlohmann::json;

constexpr char kSpec[] = R"(
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: kube-flannel, namespace: kube-system}
- object:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: kube-flannel-cfg, namespace: kube-system}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRoleBinding
  metadata: {name: "system:flannel", namespace: kube-system}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: "system:flannel"}
- apiVersion: v1
  kind: Secret
  metadata: {name: s, namespace: kube-system}
)";

TEST(ManifestObjectsTest, StagesDefinitionsThenConfigMapsAndSecretsThenTheRest) {
  auto objects = ManifestObjectsToApply({kSpec});
  ASSERT_TRUE(objects.ok()) << objects.status();
  std::vector<std::string> order;
  for (const ManifestObject& o : *objects) order.push_back(o.Describe());
  EXPECT_EQ(order, (std::vector<std::string>{
                       "ClusterRole system:flannel", "ConfigMap kube-system/kube-flannel-cfg",
                       "Secret kube-system/s", "DaemonSet kube-system/kube-flannel",
                       "ClusterRoleBinding system:flannel"}));
  // A cluster-scoped kind loses the namespace written by mistake, as upstream's apply does.
  EXPECT_EQ((*objects)[4].Path(),
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:flannel");
  EXPECT_FALSE((*objects)[4].object["metadata"].contains("namespace"));
  for (const ManifestObject& o : *objects) {
    EXPECT_EQ(o.object["metadata"]["annotations"][kInventoryAnnotation], kInventoryName);
  }
}

TEST(ManifestObjectsTest, InventoryKeysAreCliUtilsObjMetadata) {
  auto objects = ManifestObjectsToApply({kSpec});
  ASSERT_TRUE(objects.ok());
  EXPECT_EQ((*objects)[1].InventoryKey(), "kube-system_kube-flannel-cfg__ConfigMap");
  EXPECT_EQ((*objects)[0].InventoryKey(), "_system__flannel_rbac.authorization.k8s.io_ClusterRole");
  auto ref = ParseInventoryKey((*objects)[0].InventoryKey());
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->name, "system:flannel");
  EXPECT_EQ(ref->group, "rbac.authorization.k8s.io");
  EXPECT_EQ(InventoryRefPath(*ref, {}),
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:flannel");
  auto proxy = ParseInventoryKey("kube-system_kube-proxy_apps_DaemonSet");
  ASSERT_TRUE(proxy.has_value());
  EXPECT_EQ(InventoryRefPath(*proxy, {}),
            "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy");
  EXPECT_FALSE(ParseInventoryKey("not-a-key").has_value());
  EXPECT_FALSE(InventoryRefPath({"", "w", "example.com", "Widget"}, {}).has_value());
}

TEST(ManifestObjectsTest, AnObjectNamingAnotherInventoryIsRefused) {
  auto objects = ManifestObjectsToApply(
      {"- {apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: a, annotations: "
       "{config.k8s.io/owning-inventory: other}}}\n"});
  EXPECT_TRUE(absl::IsInvalidArgument(objects.status())) << objects.status();
}

TEST(ManifestObjectsTest, LiveObjectsSayWhoAppliedThem) {
  const json ours = json::parse(R"({"metadata": {
      "annotations": {"config.k8s.io/owning-inventory": "talos-bootstrap-manifests-inventory"},
      "managedFields": [{"manager": "talos", "operation": "Apply"}]}})");
  EXPECT_TRUE(AppliedByTalos(ours));
  EXPECT_EQ(ForeignInventory(ours), "");
  const json created = json::parse(R"({"metadata": {
      "managedFields": [{"manager": "talos", "operation": "Update"},
                        {"manager": "talos-reconciler", "operation": "Apply"}]}})");
  EXPECT_FALSE(AppliedByTalos(created));
  EXPECT_EQ(ForeignInventory(created), "");
  EXPECT_EQ(ForeignInventory(json::parse(
                R"({"metadata": {"annotations": {"config.k8s.io/owning-inventory": "x"}}})")),
            "x");
}

}  // namespace
}  // namespace tr::reconciler::k8s_upgrade
