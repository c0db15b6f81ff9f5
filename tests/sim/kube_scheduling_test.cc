// Evictions through the fake Kubernetes API as the real API server and controllers answer them:
// budgets (IfHealthyBudget, more than one budget), the controllers' replacements, and the
// scheduler's filters deciding where a replacement goes or that it stays Pending until a node
// becomes eligible.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sim/kube_test_client.h"

namespace tr::sim {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::KubeFleet;
using namespace std::chrono_literals;

constexpr const char* kSchedulingFleet = R"(
time_scale: 0.002
clusters:
  - name: lab
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: w-1, talos: v1.11.6, kubernetes: 1.34.1, labels: {zone: a}}
      - {name: w-2, talos: v1.11.6, kubernetes: 1.34.1, labels: {zone: b}}
      - {name: w-3, talos: v1.11.6, kubernetes: 1.34.1, labels: {zone: b}}
    persistent_volumes:
      - {name: pv-db-0, node: w-1, claim: default/data-db-0}
    pods:
      - {name: web-a, node: w-2, labels: {app: web}, node_selector: {zone: b},
         anti_affinity: {app: web}}
      - {name: web-b, node: w-3, labels: {app: web}, node_selector: {zone: b},
         anti_affinity: {app: web}}
      - {name: db-0, node: w-1, owner: StatefulSet, labels: {app: db},
         volumes: [{name: data, claim: data-db-0}]}
      - {name: api-1, node: w-2, labels: {app: api}, node_selector: {zone: b},
         spread: {max_skew: 1, labels: {app: api}}}
      - {name: api-2, node: w-3, labels: {app: api}, node_selector: {zone: b},
         spread: {max_skew: 1, labels: {app: api}}}
      - {name: batch, node: w-3, owner: none, labels: {app: batch}}
      - {name: agent-x, node: w-2, owner: DaemonSet, owner_name: agent, labels: {app: agent}}
      - {name: flaky-a, node: w-1, ready: false, labels: {app: flaky}}
      - {name: flaky-b, node: w-2, labels: {app: flaky}}
      - {name: multi, node: w-3, labels: {app: multi, tier: x}}
    pdbs:
      - {name: flaky, selector: {app: flaky}, min_available: 1}
      - {name: multi-app, selector: {app: multi}, min_available: 0}
      - {name: multi-tier, selector: {tier: x}, min_available: 0}
)";

// The pods with label app=<app>.
json PodsOf(KubeFleet& kube, const std::string& app) {
  return kube.Get("/api/v1/namespaces/default/pods?labelSelector=app%3D" + app)["items"];
}

// Waits for a journal entry `what` about `detail` ("default/db-0").
void AwaitJournal(KubeFleet& kube, const std::string& what, const std::string& detail) {
  ASSERT_TRUE(kube.fleet()
                  .journal()
                  .WaitFor(
                      [&](const std::vector<JournalEntry>& entries) {
                        for (const auto& e : entries) {
                          if (e.what == what && e.detail == detail) return true;
                        }
                        return false;
                      },
                      20s)
                  .ok())
      << what << " " << detail;
}

TEST(KubeSchedulingTest, AReplicaSetsPodComesBackUnderANewNameWhereAntiAffinityAllows) {
  KubeFleet kube(kSchedulingFleet);
  ASSERT_TRUE(kube.status().ok()) << kube.status();
  EXPECT_EQ(kube.Evict("default", "web-a").first, 201);
  // Its node is the old one and the other zone-b node runs web-b: Pending.
  json web = PodsOf(kube, "web");
  ASSERT_EQ(web.size(), 2u);
  json fresh = web[0]["metadata"]["name"] == "web-b" ? web[1] : web[0];
  const std::string name = fresh["metadata"]["name"];
  EXPECT_THAT(name, ::testing::StartsWith("web-a-"));
  EXPECT_FALSE(fresh["spec"].contains("nodeName"));
  EXPECT_EQ(fresh["status"]["phase"], "Pending");
  const json scheduled = fresh["status"]["conditions"][1];
  EXPECT_EQ(scheduled["type"], "PodScheduled");
  EXPECT_EQ(scheduled["reason"], "Unschedulable");
  EXPECT_THAT(scheduled["message"].get<std::string>(),
              HasSubstr("0/4 nodes are available: 2 node(s) didn't match Pod's node "
                        "affinity/selector, 1 node(s) didn't match pod anti-affinity rules, 1 "
                        "node(s) were unschedulable."));
  // Its old node eligible again (cordoned and uncordoned): bound there, Ready after pod_start.
  kube.Cordon("w-2", true);
  kube.Cordon("w-2", false);
  AwaitJournal(kube, "pod-ready", "default/" + name);
  json bound = kube.Get("/api/v1/namespaces/default/pods/" + name);
  EXPECT_EQ(bound["spec"]["nodeName"], "w-2");
  EXPECT_EQ(bound["status"]["conditions"][0]["status"], "True");
}

TEST(KubeSchedulingTest, AStatefulSetsPodComesBackUnderItsNameOnlyOnItsVolumesNode) {
  KubeFleet kube(kSchedulingFleet);
  ASSERT_TRUE(kube.status().ok()) << kube.status();
  const std::string uid = kube.Get("/api/v1/namespaces/default/pods/db-0")["metadata"]["uid"];
  kube.Cordon("w-1", true);
  EXPECT_EQ(kube.Evict("default", "db-0").first, 201);
  json pending = kube.Get("/api/v1/namespaces/default/pods/db-0");
  EXPECT_NE(pending["metadata"]["uid"], uid);
  EXPECT_EQ(pending["status"]["phase"], "Pending");
  EXPECT_THAT(pending["status"]["conditions"][1]["message"].get<std::string>(),
              HasSubstr("3 node(s) had volume node affinity conflict, 1 node(s) were "
                        "unschedulable"));
  kube.Cordon("w-1", false);
  AwaitJournal(kube, "pod-ready", "default/db-0");
  json bound = kube.Get("/api/v1/namespaces/default/pods/db-0");
  EXPECT_EQ(bound["spec"]["nodeName"], "w-1");
  EXPECT_EQ(bound["status"]["conditions"][0]["status"], "True");
}

// With the default nodeTaintsPolicy Ignore a cordoned node stays a domain of the spread: its 0
// pods make the other node's second pod a skew of 2.
TEST(KubeSchedulingTest, TopologySpreadCountsTheCordonedNodeSoTheReplacementWaits) {
  KubeFleet kube(kSchedulingFleet);
  ASSERT_TRUE(kube.status().ok()) << kube.status();
  kube.Cordon("w-2", true);
  EXPECT_EQ(kube.Evict("default", "api-1").first, 201);
  json api = PodsOf(kube, "api");
  ASSERT_EQ(api.size(), 2u);
  json fresh = api[0]["metadata"]["name"] == "api-2" ? api[1] : api[0];
  EXPECT_EQ(fresh["status"]["phase"], "Pending");
  EXPECT_THAT(fresh["status"]["conditions"][1]["message"].get<std::string>(),
              HasSubstr("1 node(s) didn't match pod topology spread constraints"));
  kube.Cordon("w-2", false);
  const std::string name = fresh["metadata"]["name"];
  AwaitJournal(kube, "pod-ready", "default/" + name);
  EXPECT_EQ(kube.Get("/api/v1/namespaces/default/pods/" + name)["spec"]["nodeName"], "w-2");
}

TEST(KubeSchedulingTest, APodWithoutAControllerIsGoneAndADaemonSetsStaysOnItsNode) {
  KubeFleet kube(kSchedulingFleet);
  ASSERT_TRUE(kube.status().ok()) << kube.status();
  EXPECT_EQ(kube.Evict("default", "batch").first, 201);
  EXPECT_EQ(PodsOf(kube, "batch").size(), 0u);
  EXPECT_EQ(kube.Evict("default", "agent-x").first, 201);
  json agent = PodsOf(kube, "agent");
  ASSERT_EQ(agent.size(), 1u);
  EXPECT_NE(agent[0]["metadata"]["name"], "agent-x");
  EXPECT_EQ(agent[0]["spec"]["nodeName"], "w-2");
}

TEST(KubeSchedulingTest, EvictionFollowsTheBudgetsAsTheApiServerDoes) {
  KubeFleet kube(kSchedulingFleet);
  ASSERT_TRUE(kube.status().ok()) << kube.status();
  // Two budgets over one pod: the eviction subresource refuses.
  auto [code, body] = kube.Evict("default", "multi");
  EXPECT_EQ(code, 500);
  EXPECT_EQ(body["message"],
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does "
            "not support.");
  // IfHealthyBudget: the budget has its 1 healthy pod, so the unready one may go without using
  // it up; the healthy one may not.
  EXPECT_EQ(kube.Evict("default", "flaky-a").first, 201);
  auto [refused, status] = kube.Evict("default", "flaky-b");
  EXPECT_EQ(refused, 429);
  EXPECT_EQ(status["details"]["causes"][0]["reason"], "DisruptionBudget");
  EXPECT_EQ(status["details"]["causes"][0]["message"],
            "The disruption budget flaky needs 1 healthy pods and has 1 currently");
}

}  // namespace
}  // namespace tr::sim
