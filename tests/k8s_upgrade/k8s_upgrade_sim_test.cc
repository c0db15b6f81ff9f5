// KubernetesUpgrade against talos-sim (real gRPC over mTLS, the fake Kubernetes API over HTTPS):
// a one-minor upgrade, a stopped run resumed, the pre-checks that refuse, and each fault ending
// in a failure that names the component and node with nothing further touched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "reconciler/clients/kube/http_kube_client.h"
#include "reconciler/clients/kube/kubeconfig.h"
#include "reconciler/operations/k8s_upgrade/k8s_upgrade.h"
#include "tests/k8s_upgrade/upgrade_fixture.h"
#include "yaml-cpp/yaml.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

class KubernetesUpgradeTest : public UpgradeFixture {
 protected:
  UpgradeOutcome RunUpgrade(const std::string& to,
                            std::function<void(const UpgradeProgress&)> progress = {},
                            std::stop_token stop = {}) {
    std::unique_ptr<kube::KubeClient> kube = Kube();
    std::unique_ptr<talos::TalosClient> client;
    NewClient("prod", &client);
    UpgradeOptions options = SimUpgradeOptions(to);
    options.before_change = fence_;
    KubernetesUpgrade upgrade(*client, *kube, Env::Default(), options,
                              [&](const UpgradeProgress& p) {
                                lines_.push_back(p.message);
                                if (progress) progress(p);
                              });
    return upgrade.Run(stop);
  }

  // The machine configuration `node` serves now.
  std::string ServedConfig(const std::string& node) {
    std::unique_ptr<talos::TalosClient> client;
    NewClient("prod", &client);
    for (const auto& n : fleet_->Nodes()) {
      if (n.name != node) continue;
      auto r = client->CosiGet(n.address, "config", "MachineConfigs.config.talos.dev", "v1alpha1");
      EXPECT_TRUE(r.ok()) << r.status();
      return r.ok() ? r->yaml_spec : "";
    }
    return "";
  }

  // Sets `section.key.extraArgs[flag]` in `node`'s configuration, as an operator would with a
  // config patch (applied without a reboot): in the component's own document when the
  // configuration has one (Talos 1.14 generates KubeletConfig, KubeAPIServerConfig, ...), else
  // in the v1alpha1 document, which comes first in the simulator's configurations.
  void SetExtraArg(const std::string& node, const char* section, const char* key,
                   const std::string& flag, const std::string& value) {
    static const std::map<std::string, std::string> kDocuments = {
        {"machine.kubelet", "KubeletConfig"},
        {"cluster.apiServer", "KubeAPIServerConfig"},
        {"cluster.controllerManager", "KubeControllerManagerConfig"},
        {"cluster.scheduler", "KubeSchedulerConfig"},
        {"cluster.proxy", "KubeProxyConfig"}};
    std::vector<YAML::Node> docs = YAML::LoadAll(ServedConfig(node));
    ASSERT_FALSE(docs.empty());
    const std::string kind = kDocuments.at(std::string(section) + "." + key);
    // (A YAML::Node assigned to another aliases it: find the document first, then edit it.)
    auto own = std::find_if(docs.begin(), docs.end(), [&](const YAML::Node& doc) {
      return doc.IsMap() && doc["kind"] && doc["kind"].as<std::string>() == kind;
    });
    YAML::Node component = own != docs.end() ? *own : docs[0][section][key];
    component["extraArgs"][flag] = value;
    YAML::Emitter out;
    for (const YAML::Node& doc : docs) out << YAML::BeginDoc << doc;
    std::unique_ptr<talos::TalosClient> client;
    NewClient("prod", &client);
    talos::ApplyConfigurationRequest request;
    request.config_yaml = out.c_str();
    request.mode = talos::ApplyMode::kNoReboot;
    for (const auto& n : fleet_->Nodes()) {
      if (n.name != node) continue;
      auto applied = client->ApplyConfiguration(n.address, request);
      ASSERT_TRUE(applied.ok()) << applied.status();
    }
  }

  std::vector<std::string> lines_;
  std::function<absl::Status()> fence_;  // UpgradeOptions::before_change
};

TEST_F(KubernetesUpgradeTest, UpgradesOneMinorNodeByNode) {
  StartFleet(Fleet("v1.12.0", "1.34.1", ""));
  // The workers' configurations have two documents after v1alpha1 (see tests/sim/node/config.cc).
  const std::string worker_config = ServedConfig("w-1");
  const size_t extra = worker_config.find("--- # kubelet ingress");
  ASSERT_NE(extra, std::string::npos) << "the simulator serves a single document";
  UpgradeOutcome outcome = RunUpgrade("1.35.0");
  ASSERT_TRUE(outcome.status.ok()) << outcome.status << " " << outcome.component;
  EXPECT_EQ(outcome.from, "1.34.1");
  EXPECT_EQ(outcome.applied, kAllApplies);
  EXPECT_EQ(outcome.already_done, 0);
  ExpectAllAt("1.35.0");
  EXPECT_EQ(TotalApplies(), kAllApplies);
  // Control planes: three static pods, kube-proxy, the kubelet; workers: the kubelet.
  EXPECT_EQ(Applies("cp-2"), 5u);
  EXPECT_EQ(Applies("w-2"), 1u);
  EXPECT_NE(std::find(lines_.begin(), lines_.end(), "kubelets 3/5: cp-3 at v1.35.0"), lines_.end());
  // The bootstrap manifests: the kube-proxy DaemonSet gets the new image; CoreDNS keeps its
  // image and is applied once to become Talos's (manifests_sim_test.cc).
  EXPECT_NE(std::find(lines_.begin(), lines_.end(),
                      "manifests 1/2: DaemonSet kube-system/kube-proxy applied"),
            lines_.end());
  EXPECT_NE(std::find(lines_.begin(), lines_.end(),
                      "manifests 2/2: Deployment kube-system/coredns applied"),
            lines_.end());
  EXPECT_EQ(ManifestChanges(),
            (std::vector<std::string>{
                "daemonsets/kube-proxy image = registry.k8s.io/kube-proxy:v1.35.0"}));
  EXPECT_EQ(lines_.back(),
            "Kubernetes 1.34.1 → 1.35.0: done (17 applied, 0 already at the target, 2 manifest "
            "object(s) applied)");
  const std::string upgraded = ServedConfig("w-1");
  EXPECT_TRUE(upgraded.ends_with(worker_config.substr(extra))) << upgraded;
  EXPECT_NE(upgraded.find("kubelet:v1.35.0"), std::string::npos);
  // Every static pod of cp-1 ran the new image before anything changed on cp-2.
  EXPECT_LT(FirstStateSeq("cp-1", "static pod", "kube-apiserver-cp-1 ready"),
            FirstCallSeq("cp-2", "/machine.MachineService/ApplyConfiguration"));

  UpgradeOutcome again = RunUpgrade("1.35.0");
  ASSERT_TRUE(again.status.ok()) << again.status;
  EXPECT_EQ(again.applied, 0);
  EXPECT_EQ(again.manifests_applied, 0);
  EXPECT_EQ(ManifestChanges().size(), 1u);
  EXPECT_EQ(TotalApplies(), kAllApplies);
}

TEST_F(KubernetesUpgradeTest, StoppedRunResumesWithNothingAppliedTwice) {
  StartFleet(Fleet("v1.12.0", "1.34.1", ""));
  std::stop_source stop;
  UpgradeOutcome first = RunUpgrade(
      "1.35.0",
      [&](const UpgradeProgress& p) {
        if (p.phase == "static pods" && p.done == 4) stop.request_stop();
      },
      stop.get_token());
  EXPECT_EQ(first.status.code(), absl::StatusCode::kCancelled);
  const size_t before = TotalApplies();
  EXPECT_GE(before, 4u);
  EXPECT_LT(before, kAllApplies);
  UpgradeOutcome second = RunUpgrade("1.35.0");
  ASSERT_TRUE(second.status.ok()) << second.status << " " << second.component;
  EXPECT_EQ(first.applied + second.applied, kAllApplies);
  EXPECT_EQ(TotalApplies(), kAllApplies);
  ExpectAllAt("1.35.0");
}

// Leader election's fence: once this replica may no longer change the cluster, the run stops
// before the next change, having made none after the refusal; the holder's run resumes it.
TEST_F(KubernetesUpgradeTest, ARefusedFenceStopsTheRunBeforeTheNextChange) {
  StartFleet(Fleet("v1.12.0", "1.34.1", ""));
  int allowed = 4;
  fence_ = [&]() -> absl::Status {
    if (allowed-- > 0) return absl::OkStatus();
    return absl::AbortedError("shard 0 is held by replica-b");
  };
  UpgradeOutcome deposed = RunUpgrade("1.35.0");
  EXPECT_EQ(deposed.status.code(), absl::StatusCode::kCancelled) << deposed.status;
  EXPECT_THAT(std::string(deposed.status.message()), testing::HasSubstr("held by replica-b"));
  EXPECT_EQ(TotalApplies(), 4u);
  fence_ = nullptr;
  UpgradeOutcome holder = RunUpgrade("1.35.0");
  ASSERT_TRUE(holder.status.ok()) << holder.status << " " << holder.component;
  EXPECT_EQ(TotalApplies(), kAllApplies);
  ExpectAllAt("1.35.0");
}

TEST_F(KubernetesUpgradeTest, RefusesATargetTalosDoesNotRun) {
  StartFleet(Fleet("v1.12.0", "1.34.1", "v1.10.6"));
  UpgradeOutcome outcome = RunUpgrade("1.35.0");
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(outcome.component, "pre-checks");
  EXPECT_EQ(outcome.node, "w-1");
  EXPECT_NE(outcome.status.message().find("Talos v1.10.6 on w-1 does not run Kubernetes 1.35"),
            std::string::npos)
      << outcome.status;
  EXPECT_EQ(TotalApplies(), 0u);
}

TEST_F(KubernetesUpgradeTest, RefusesTwoMinorsInOneRun) {
  StartFleet(Fleet("v1.12.0", "1.33.6", ""));
  UpgradeOutcome outcome = RunUpgrade("1.35.0");
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(outcome.status.message().find("one minor per run (next: 1.34)"), std::string::npos)
      << outcome.status;
  EXPECT_EQ(TotalApplies(), 0u);
}

TEST_F(KubernetesUpgradeTest, RemovedApiInUseIsRefusedBeforeAnythingChanges) {
  StartFleet(Fleet("v1.10.6", "1.31.4", "", "cp-1", "removed_api_in_use"));
  UpgradeOutcome outcome = RunUpgrade("1.32.0");
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(outcome.component, "pre-checks");
  EXPECT_NE(outcome.status.message().find("podschedulingcontexts.v1alpha3.resource.k8s.io"),
            std::string::npos)
      << outcome.status;
  EXPECT_EQ(TotalApplies(), 0u);
}

// Kubernetes 1.31 removed the PersistentVolumeLabel admission plugin and the kubelet's
// --keep-terminated-pod-volumes: set in the machine configuration, each is named with the field
// to change, and nothing is upgraded.
TEST_F(KubernetesUpgradeTest, RemovedAdmissionPluginAndFlagInExtraArgsAreRefused) {
  StartFleet(Fleet("v1.10.6", "1.30.4", ""));
  SetExtraArg("cp-2", "cluster", "apiServer", "enable-admission-plugins",
              "NodeRestriction,PersistentVolumeLabel");
  SetExtraArg("w-1", "machine", "kubelet", "keep-terminated-pod-volumes", "true");
  const size_t patches = TotalApplies();
  UpgradeOutcome outcome = RunUpgrade("1.31.0");
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(outcome.component, "pre-checks");
  const std::string message(outcome.status.message());
  EXPECT_NE(message.find("removed in Kubernetes 1.31 but still set in the machine configuration: "
                         "admission plugin PersistentVolumeLabel in --enable-admission-plugins "
                         "in cluster.apiServer.extraArgs of cp-2; flag "
                         "--keep-terminated-pod-volumes in machine.kubelet.extraArgs of w-1; "
                         "remove them"),
            std::string::npos)
      << message;
  EXPECT_EQ(TotalApplies(), patches);
}

// Kubernetes 1.37 removed the kubelet's cAdvisor flags and the kubelet fails to start if any is
// set (go-kubernetes checks.go, provisional upstream): a kubelet patched to 1.37 with one would
// never come back, so the run stops at the pre-check with no node touched.
TEST_F(KubernetesUpgradeTest, RemovedKubeletCadvisorFlagBlocks136To137AtThePreCheck) {
  StartFleet(Fleet("v1.14.0", "1.36.3", ""));
  SetExtraArg("w-2", "machine", "kubelet", "housekeeping-interval", "10s");  // not removed
  SetExtraArg("w-2", "machine", "kubelet", "event-storage-age-limit", "default=0");
  const size_t patches = TotalApplies();
  UpgradeOutcome outcome = RunUpgrade("1.37.0");
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(outcome.component, "pre-checks");
  EXPECT_EQ(std::string(outcome.status.message()),
            "removed in Kubernetes 1.37 but still set in the machine configuration: flag "
            "--event-storage-age-limit in KubeletConfig.extraArgs of w-2; remove them from "
            "those extraArgs (a config patch) and run again");
  EXPECT_EQ(TotalApplies(), patches);
  for (const char* n : {"cp-1", "cp-2", "cp-3", "w-1", "w-2"}) {
    EXPECT_EQ(ImageChanges(n, "kubelet"), 0u) << n;
    EXPECT_EQ(ImageChanges(n, "kube-apiserver"), 0u) << n;
  }
  ExpectAllAt("1.36.3");
}

TEST_F(KubernetesUpgradeTest, ImagePullFailureStopsBeforeAnyChange) {
  StartFleet(Fleet("v1.12.0", "1.34.1", "", "cp-2", "image_pull_failure", "kube-scheduler:v1.35"));
  UpgradeOutcome outcome = RunUpgrade("1.35.0");
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(outcome.component, "image pull");
  EXPECT_EQ(outcome.node, "cp-2");
  EXPECT_NE(outcome.status.message().find("registry.k8s.io/kube-scheduler:v1.35.0"),
            std::string::npos)
      << outcome.status;
  EXPECT_EQ(TotalApplies(), 0u);
}

TEST_F(KubernetesUpgradeTest, StaticPodNeverReadyStopsAtThatNode) {
  StartFleet(
      Fleet("v1.12.0", "1.34.1", "", "cp-2", "static_pod_not_ready", "kube-controller-manager"));
  UpgradeOutcome outcome = RunUpgrade("1.35.0");
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(outcome.component, "kube-controller-manager");
  EXPECT_EQ(outcome.node, "cp-2");
  EXPECT_NE(outcome.status.message().find("not Ready"), std::string::npos) << outcome.status;
  // kube-apiserver on all three, kube-controller-manager on cp-1 and cp-2; nothing after.
  EXPECT_EQ(TotalApplies(), 5u);
  EXPECT_EQ(Applies("cp-3"), 1u);
}

TEST_F(KubernetesUpgradeTest, KubeletThatDoesNotComeBackStopsAtThatNode) {
  StartFleet(Fleet("v1.12.0", "1.34.1", "", "w-1", "kubelet_not_returning"));
  UpgradeOutcome outcome = RunUpgrade("1.35.0");
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(outcome.component, "kubelet");
  EXPECT_EQ(outcome.node, "w-1");
  EXPECT_NE(outcome.status.message().find("Talos kubelet service: Failed"), std::string::npos)
      << outcome.status;
  EXPECT_EQ(Applies("w-1"), 1u);
  EXPECT_EQ(Applies("w-2"), 0u);
}

}  // namespace
}  // namespace tr::reconciler::k8s_upgrade
