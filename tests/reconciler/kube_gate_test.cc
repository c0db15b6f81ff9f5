// Health checks of type kubernetes (reconciler/operations/gates/probes.h) through the real HTTPS
// Kubernetes client against the simulator's Kubernetes API, whose Deployments and DaemonSets
// the test creates and whose status it changes as their controllers would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "reconciler/clients/kube/http_kube_client.h"
#include "reconciler/clients/kube/kubeconfig.h"
#include "reconciler/operations/gates/probes.h"
#include "tests/sim/fleet.h"
#include "tests/sim/catalog/fleet_spec.h"

namespace tr::reconciler::gates {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kFleet = R"(
time_scale: 0.002
clusters:
  - name: lab
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
)";

class KubeGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kube-gate-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    auto fleet = sim::Fleet::Start(*sim::FleetSpec::Parse(kFleet), dir_);
    ASSERT_TRUE(fleet.ok()) << fleet.status();
    fleet_ = std::move(*fleet);
    sim::ClusterAccess access = *fleet_->Cluster("lab");
    std::ifstream in(access.kubeconfig);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<kube::KubeCredentials> credentials = kube::ParseKubeconfig(text.str());
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    auto client = kube::NewHttpKubeClient(*credentials, Env::Default());
    ASSERT_TRUE(client.ok()) << client.status();
    kube_ = *std::move(client);
    // The test's own client, standing in for kubectl and the workload controllers.
    const std::filesystem::path ca = dir_ / "kube-ca.pem";
    std::ofstream(ca) << access.kube_ca_pem;
    admin_ = std::make_unique<httplib::SSLClient>(access.control_plane_addresses.front(), 6443);
    admin_->set_ca_cert_path(ca.c_str());
    admin_->enable_server_certificate_verification(true);
    admin_->set_bearer_token_auth(credentials->token.c_str());
  }
  void TearDown() override {
    fleet_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Create(const std::string& ns, const std::string& plural, const json& obj) {
    auto res = admin_->Post(("/apis/apps/v1/namespaces/" + ns + "/" + plural).c_str(), obj.dump(),
                            "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 201) << res->body;
  }
  void Patch(const std::string& path, const json& patch) {
    auto res = admin_->Patch(("/apis/apps/v1/namespaces/" + path).c_str(), patch.dump(),
                             "application/merge-patch+json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
  }

  ProbeAnswer Check(const std::string& kind, const std::string& ns, const std::string& name,
                    const std::string& selector = "") {
    core::HealthCheck c;
    c.name = "workloads";
    c.spec = core::KubernetesCheck{.workload_kind = kind,
                                   .namespace_name = ns,
                                   .workload_name = name,
                                   .label_selector = selector};
    return ProbeKubernetes(c, *kube_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<sim::Fleet> fleet_;
  std::unique_ptr<kube::KubeClient> kube_;
  std::unique_ptr<httplib::SSLClient> admin_;
};

json DaemonSet(const std::string& name, int desired, int updated) {
  return {{"metadata", {{"name", name}, {"labels", {{"tier", "node"}}}}},
          {"spec", {{"template", {{"spec", {{"image", "v1"}}}}}}},
          {"status",
           {{"observedGeneration", 1},
            {"desiredNumberScheduled", desired},
            {"currentNumberScheduled", desired},
            {"updatedNumberScheduled", updated},
            {"numberReady", updated},
            {"numberAvailable", updated}}}};
}

TEST_F(KubeGateTest, ADeploymentIsHealthyOnceRolledOut) {
  Create("rook-ceph", "deployments",
         {{"metadata", {{"name", "rook-ceph-mgr"}}}, {"spec", {{"replicas", 2}}}});
  EXPECT_EQ(Check("Deployment", "rook-ceph", "rook-ceph-mgr").message,
            "Deployment rook-ceph/rook-ceph-mgr: generation 1 not yet observed (at 0)");
  const std::string status = "rook-ceph/deployments/rook-ceph-mgr/status";
  Patch(status, {{"status",
                  {{"observedGeneration", 1}, {"replicas", 2}, {"updatedReplicas", 1},
                   {"readyReplicas", 1}, {"availableReplicas", 1}}}});
  EXPECT_EQ(Check("Deployment", "rook-ceph", "rook-ceph-mgr").message,
            "Deployment rook-ceph/rook-ceph-mgr: 1 of 2 updated");
  Patch(status, {{"status", {{"replicas", 3}, {"updatedReplicas", 2}}}});
  EXPECT_EQ(Check("Deployment", "rook-ceph", "rook-ceph-mgr").message,
            "Deployment rook-ceph/rook-ceph-mgr: 1 old replicas pending termination");
  Patch(status, {{"status", {{"replicas", 2}, {"readyReplicas", 2}}}});
  EXPECT_EQ(Check("Deployment", "rook-ceph", "rook-ceph-mgr").message,
            "Deployment rook-ceph/rook-ceph-mgr: 1 of 2 available");
  Patch(status, {{"status", {{"availableReplicas", 2}}}});
  ProbeAnswer ok = Check("Deployment", "rook-ceph", "rook-ceph-mgr");
  EXPECT_TRUE(ok.healthy);
  EXPECT_EQ(ok.message, "1 Deployment rolled out");
  // A new template: the controller has not seen it yet.
  Patch("rook-ceph/deployments/rook-ceph-mgr", {{"spec", {{"paused", false}}}});
  EXPECT_EQ(Check("Deployment", "rook-ceph", "rook-ceph-mgr").message,
            "Deployment rook-ceph/rook-ceph-mgr: generation 2 not yet observed (at 1)");
}

TEST_F(KubeGateTest, EveryMatchingDaemonSetMustBeReady) {
  Create("kube-system", "daemonsets", DaemonSet("cilium", 3, 3));
  Create("kube-system", "daemonsets", DaemonSet("csi-node", 3, 2));
  Create("longhorn-system", "daemonsets", DaemonSet("longhorn-manager", 3, 0));
  ProbeAnswer a = Check("DaemonSet", "kube-system", "", "tier=node");
  EXPECT_FALSE(a.healthy);
  EXPECT_EQ(a.message, "DaemonSet kube-system/csi-node: 2 of 3 updated");
  Patch("kube-system/daemonsets/csi-node/status",
        {{"status", {{"updatedNumberScheduled", 3}, {"numberReady", 3}, {"numberAvailable", 3}}}});
  a = Check("DaemonSet", "kube-system", "");  // every DaemonSet of the namespace
  EXPECT_TRUE(a.healthy) << a.message;
  EXPECT_EQ(a.message, "2 DaemonSets rolled out");
  EXPECT_EQ(Check("DaemonSet", "longhorn-system", "longhorn-manager").message,
            "DaemonSet longhorn-system/longhorn-manager: 0 of 3 updated");
}

TEST_F(KubeGateTest, NothingToCheckIsNotHealthy) {
  ProbeAnswer none = Check("DaemonSet", "kube-system", "", "tier=none");
  EXPECT_FALSE(none.healthy);
  EXPECT_EQ(none.message, "no DaemonSet in namespace kube-system matches \"tier=none\"");
  ProbeAnswer absent = Check("StatefulSet", "db", "postgres");
  EXPECT_FALSE(absent.healthy);
  EXPECT_THAT(absent.message, HasSubstr("no answer: kubernetes get StatefulSet db/postgres: "
                                        "HTTP 404"));
}

}  // namespace
}  // namespace tr::reconciler::gates
