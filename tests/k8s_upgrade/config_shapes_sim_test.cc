// KubernetesUpgrade on every shape of machine configuration Talos accepts, against talos-sim
// (real gRPC over mTLS): a Talos 1.14 cluster generated the 1.14 way (every component in its
// own document), a partly migrated one (the kubelet in KubeletConfig, the control plane in
// v1alpha1), and a node whose configuration cannot be patched refused before any node is
// touched. talos-sim refuses a component set in both places, so each patch landing in the
// wrong place would fail here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "reconciler/clients/kube/http_kube_client.h"
#include "reconciler/clients/kube/kubeconfig.h"
#include "reconciler/operations/k8s_upgrade/k8s_upgrade.h"
#include "tests/k8s_upgrade/upgrade_fixture.h"
#include "yaml-cpp/yaml.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

class ConfigShapesTest : public UpgradeFixture {
 protected:
  // Five nodes on Talos `talos`, Kubernetes `kubernetes`, each with the fleet file's `config:`
  // of `shapes` (the shape `talosctl gen config` of that version writes when absent).
  std::string ShapedFleet(const std::string& talos,
                          const std::map<std::string, std::string>& shapes,
                          const std::string& kubernetes = "1.36.3") {
    std::string out = "time_scale: " + time_scale_ + "\nclusters:\n  - name: prod\n    nodes:\n";
    for (const char* name : {"cp-1", "cp-2", "cp-3", "w-1", "w-2"}) {
      const bool cp = std::string_view(name).starts_with("cp");
      auto shape = shapes.find(name);
      out += fmt::format("      - {{name: {}, role: {}, talos: {}, kubernetes: {}{}}}\n", name,
                         cp ? "controlplane" : "worker", talos, kubernetes,
                         shape == shapes.end() ? "" : ", config: " + shape->second);
    }
    return out;
  }

  UpgradeOutcome RunUpgrade(const std::string& to) {
    std::unique_ptr<kube::KubeClient> kube = Kube();
    std::unique_ptr<talos::TalosClient> client;
    NewClient("prod", &client);
    KubernetesUpgrade upgrade(*client, *kube, Env::Default(), SimUpgradeOptions(to),
                              [&](const UpgradeProgress& p) { lines_.push_back(p.message); });
    return upgrade.Run({});
  }

  talos::CosiResource ServedConfig(const std::string& node) {
    std::unique_ptr<talos::TalosClient> client;
    NewClient("prod", &client);
    auto r = client->CosiGet(*fleet_->NodeAddress(node), "config",
                             "MachineConfigs.config.talos.dev", "v1alpha1");
    EXPECT_TRUE(r.ok()) << r.status();
    return r.value_or(talos::CosiResource{});
  }

  // The image of `kind`'s document in `node`'s configuration; "" when it has none.
  std::string DocumentImage(const std::string& node, const std::string& kind) {
    for (const YAML::Node& doc : YAML::LoadAll(ServedConfig(node).yaml_spec)) {
      if (doc["kind"] && doc["kind"].as<std::string>() == kind) {
        return doc["image"].as<std::string>("");
      }
    }
    return "";
  }

  // Applies `node`'s configuration after `keep` has seen each document (the v1alpha1 one
  // included): it may change it in place, and drops it by answering false; as an operator's
  // config patch would.
  void EditConfig(const std::string& node, const std::function<bool(YAML::Node&)>& keep) {
    YAML::Emitter out;
    for (YAML::Node doc : YAML::LoadAll(ServedConfig(node).yaml_spec)) {
      if (keep(doc)) out << YAML::BeginDoc << doc;
    }
    std::unique_ptr<talos::TalosClient> client;
    NewClient("prod", &client);
    talos::ApplyConfigurationRequest request;
    request.config_yaml = out.c_str();
    request.mode = talos::ApplyMode::kNoReboot;
    auto applied = client->ApplyConfiguration(*fleet_->NodeAddress(node), request);
    ASSERT_TRUE(applied.ok()) << applied.status();
  }

  static bool IsKind(const YAML::Node& doc, const char* kind) {
    return doc["kind"] && doc["kind"].as<std::string>() == kind;
  }

  std::vector<std::string> lines_;
};

TEST_F(ConfigShapesTest, UpgradesATalos114ClusterGeneratedThe114Way) {
  StartFleet(ShapedFleet("v1.14.0", {}));
  const UpgradeOutcome outcome = RunUpgrade("1.37.0");
  ASSERT_TRUE(outcome.status.ok())
      << outcome.status << " " << outcome.component << " after " << TotalApplies() << " applies";
  EXPECT_EQ(outcome.from, "1.36.3");
  EXPECT_EQ(outcome.applied, kAllApplies);
  EXPECT_EQ(TotalApplies(), kAllApplies);
  ExpectAllAt("1.37.0");
  EXPECT_EQ(DocumentImage("cp-2", "KubeAPIServerConfig"), "registry.k8s.io/kube-apiserver:v1.37.0");
  EXPECT_EQ(DocumentImage("cp-2", "KubeProxyConfig"), "registry.k8s.io/kube-proxy:v1.37.0");
  EXPECT_EQ(DocumentImage("w-2", "KubeletConfig"), "ghcr.io/siderolabs/kubelet:v1.37.0");
  EXPECT_THAT(lines_, Contains("pre-checks: Kubernetes settings kept in: cp-1 documents, cp-2 "
                               "documents, cp-3 documents, w-1 documents, w-2 documents"));
}

TEST_F(ConfigShapesTest, UpgradesAPartlyMigratedClusterCompletely) {
  // Every node moved its kubelet to KubeletConfig by hand; the control plane is in v1alpha1.
  StartFleet(ShapedFleet("v1.14.0", {{"cp-1", "partly_migrated"},
                                     {"cp-2", "partly_migrated"},
                                     {"cp-3", "partly_migrated"},
                                     {"w-1", "partly_migrated"},
                                     {"w-2", "partly_migrated"}}));
  const UpgradeOutcome outcome = RunUpgrade("1.37.0");
  ASSERT_TRUE(outcome.status.ok()) << outcome.status << " " << outcome.component << " "
                                   << outcome.node << " after " << TotalApplies() << " applies";
  EXPECT_EQ(outcome.applied, kAllApplies);
  ExpectAllAt("1.37.0");
  EXPECT_EQ(DocumentImage("w-1", "KubeletConfig"), "ghcr.io/siderolabs/kubelet:v1.37.0");
  EXPECT_EQ(DocumentImage("cp-1", "KubeAPIServerConfig"), "");
  EXPECT_THAT(ServedConfig("cp-1").yaml_spec,
              HasSubstr("image: registry.k8s.io/kube-apiserver:v1.37.0"));
}

TEST_F(ConfigShapesTest, UpgradesAClusterMixingEveryShape) {
  // cp-1 and w-1 migrated their kubelet by hand; cp-3 migrated everything; the rest is v1alpha1.
  StartFleet(ShapedFleet("v1.14.0", {{"cp-1", "partly_migrated"},
                                     {"cp-2", "v1alpha1"},
                                     {"cp-3", "migrated"},
                                     {"w-1", "partly_migrated"},
                                     {"w-2", "v1alpha1"}}));
  const UpgradeOutcome outcome = RunUpgrade("1.37.0");
  ASSERT_TRUE(outcome.status.ok()) << outcome.status << " " << outcome.component << " "
                                   << outcome.node << " after " << TotalApplies() << " applies";
  EXPECT_EQ(outcome.applied, kAllApplies);
  ExpectAllAt("1.37.0");
  EXPECT_EQ(DocumentImage("cp-1", "KubeletConfig"), "ghcr.io/siderolabs/kubelet:v1.37.0");
  EXPECT_EQ(DocumentImage("cp-3", "KubeSchedulerConfig"), "registry.k8s.io/kube-scheduler:v1.37.0");
  EXPECT_THAT(ServedConfig("w-2").yaml_spec,
              HasSubstr("image: ghcr.io/siderolabs/kubelet:v1.37.0"));
  EXPECT_THAT(lines_,
              Contains("pre-checks: Kubernetes settings kept in: cp-1 mixed (documents: kubelet; "
                       "v1alpha1: kube-apiserver, kube-controller-manager, kube-scheduler, "
                       "kube-proxy), cp-2 v1alpha1, cp-3 documents, w-1 documents, w-2 v1alpha1"));
}

// w-2's kubelet is configured nowhere (its KubeletConfig removed): known at the start, so the
// run refuses before the first node, naming the node and the component.
TEST_F(ConfigShapesTest, AComponentThatCannotBePatchedIsRefusedBeforeAnyNode) {
  StartFleet(ShapedFleet("v1.14.0", {{"w-2", "partly_migrated"}}));
  EditConfig("w-2", [](YAML::Node& doc) { return !IsKind(doc, "KubeletConfig"); });
  const UpgradeOutcome outcome = RunUpgrade("1.37.0");
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kFailedPrecondition) << outcome.status;
  EXPECT_EQ(outcome.component, "pre-checks");
  EXPECT_EQ(outcome.node, "w-2");
  EXPECT_EQ(outcome.status.message(),
            "kubelet on w-2: no image configured (neither a KubeletConfig document nor "
            "machine.kubelet)");
  EXPECT_EQ(TotalApplies(), 1u) << "applied before the refusal";  // 1: the test's own
}

// A removed kubelet flag set in KubeletConfig is found there and named with the document.
TEST_F(ConfigShapesTest, ARemovedFlagInADocumentIsNamedWithTheDocument) {
  StartFleet(ShapedFleet("v1.14.0", {}, "1.34.1"));
  EditConfig("w-1", [](YAML::Node& doc) {
    if (IsKind(doc, "KubeletConfig")) doc["extraArgs"]["pod-infra-container-image"] = "pause:3";
    return true;
  });
  const UpgradeOutcome outcome = RunUpgrade("1.35.0");
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kFailedPrecondition) << outcome.status;
  EXPECT_THAT(std::string(outcome.status.message()),
              HasSubstr("flag --pod-infra-container-image in KubeletConfig.extraArgs of w-1"));
  EXPECT_EQ(TotalApplies(), 1u) << "applied before the refusal";  // 1: the test's own
}

}  // namespace
}  // namespace tr::reconciler::k8s_upgrade
