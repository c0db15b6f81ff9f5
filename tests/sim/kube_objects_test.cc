// What a disruption forecast reads from the fake Kubernetes API: pods with their controllers,
// scheduling constraints and volumes, the controllers, PodDisruptionBudgets with the disruption
// controller's status, storage objects, and chunked lists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "fmt/format.h"
#include "tests/sim/kube_test_client.h"

namespace tr::sim {
namespace {

using nlohmann::json;
using testing::KubeFleet;

constexpr const char* kForecastFleet = R"(
time_scale: 0.002
clusters:
  - name: lab
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: w-1, talos: v1.11.6, kubernetes: 1.34.1, labels: {zone: a, disk: ssd}}
      - {name: w-2, talos: v1.11.6, kubernetes: 1.34.1, labels: {zone: b}}
      - {name: w-3, talos: v1.11.6, kubernetes: 1.34.1, labels: {zone: b}}
    storage_classes:
      - {name: local, binding_mode: WaitForFirstConsumer}
    persistent_volumes:
      - {name: pv-db-0, node: w-1, storage_class: local, claim: data/data-db-0}
    pods:
      - {name: web-a, node: w-1, labels: {app: web}, anti_affinity: {app: web}}
      - {name: web-b, node: w-2, labels: {app: web}, anti_affinity: {app: web}}
      - name: db-0
        namespace: data
        node: w-1
        owner: StatefulSet
        owner_name: db
        labels: {app: db}
        volumes: [{name: data, claim: data-db-0}, {name: scratch, empty_dir: true}]
      - {name: agent-x, node: w-2, owner: DaemonSet, owner_name: agent, labels: {app: agent},
         volumes: [{name: logs, host_path: /var/log}]}
      - {name: batch, node: w-3, owner: none, ready: false, labels: {app: batch}}
      - {name: api-1, node: w-2, labels: {app: api}, node_selector: {zone: b},
         spread: {max_skew: 1, labels: {app: api}}}
      - {name: api-2, node: w-3, labels: {app: api}, node_selector: {zone: b},
         spread: {max_skew: 1, labels: {app: api}}}
    pdbs:
      - {name: web, selector: {app: web}, max_unavailable: "50%"}
      - {name: db, namespace: data, selector: {app: db}, min_available: "100%"}
      - {name: agent, selector: {app: agent}, max_unavailable: 1}
      - {name: api, selector: {app: api}, min_available: 1}
)";

json Item(const json& list, const std::string& name) {
  for (const auto& item : list["items"]) {
    if (item["metadata"]["name"] == name) return item;
  }
  ADD_FAILURE() << "no " << name << " in " << list.dump();
  return json::object();
}

TEST(KubeObjectsTest, PodsCarryTheirControllersConstraintsAndVolumes) {
  KubeFleet kube(kForecastFleet);
  ASSERT_TRUE(kube.status().ok()) << kube.status();
  json pods = kube.Get("/api/v1/pods");
  json web = Item(pods, "web-a");
  ASSERT_EQ(web["metadata"]["ownerReferences"].size(), 1u);
  const json owner = web["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "ReplicaSet");
  EXPECT_EQ(owner["controller"], true);
  EXPECT_THAT(owner["name"].get<std::string>(), ::testing::MatchesRegex("web-[0-9a-f]{10}"));
  const json anti = web["spec"]["affinity"]["podAntiAffinity"]
                       ["requiredDuringSchedulingIgnoredDuringExecution"][0];
  EXPECT_EQ(anti["labelSelector"]["matchLabels"]["app"], "web");
  EXPECT_EQ(anti["topologyKey"], "kubernetes.io/hostname");

  json db = Item(kube.Get("/api/v1/namespaces/data/pods"), "db-0");
  EXPECT_EQ(db["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
  EXPECT_EQ(db["metadata"]["ownerReferences"][0]["name"], "db");
  EXPECT_EQ(db["spec"]["volumes"][0],
            (json{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data-db-0"}}}}));
  EXPECT_EQ(db["spec"]["volumes"][1], (json{{"name", "scratch"}, {"emptyDir", json::object()}}));

  json agent = Item(pods, "agent-x");
  EXPECT_EQ(agent["metadata"]["ownerReferences"][0]["kind"], "DaemonSet");
  EXPECT_EQ(agent["metadata"]["ownerReferences"][0]["name"], "agent");
  EXPECT_EQ(agent["spec"]["volumes"][0]["hostPath"]["path"], "/var/log");

  json batch = Item(pods, "batch");
  EXPECT_FALSE(batch["metadata"].contains("ownerReferences"));
  EXPECT_EQ(batch["status"]["conditions"][0]["status"], "False");  // ready: false

  json api = Item(pods, "api-1");
  EXPECT_EQ(api["spec"]["nodeSelector"], (json{{"zone", "b"}}));
  EXPECT_EQ(api["spec"]["topologySpreadConstraints"][0],
            (json{{"maxSkew", 1},
                  {"topologyKey", "kubernetes.io/hostname"},
                  {"whenUnsatisfiable", "DoNotSchedule"},
                  {"labelSelector", {{"matchLabels", {{"app", "api"}}}}}}));

  json w1 = kube.Get("/api/v1/nodes/w-1");
  EXPECT_EQ(w1["metadata"]["labels"]["zone"], "a");
  EXPECT_EQ(w1["metadata"]["labels"]["disk"], "ssd");
  EXPECT_EQ(w1["metadata"]["labels"]["kubernetes.io/hostname"], "w-1");
}

TEST(KubeObjectsTest, ControllersAreListedWithTheFleetFilesReplicaCounts) {
  KubeFleet kube(kForecastFleet);
  ASSERT_TRUE(kube.status().ok()) << kube.status();
  json web = Item(kube.Get("/api/v1/pods"), "web-a");
  const json ref = web["metadata"]["ownerReferences"][0];
  json rs = Item(kube.Get("/apis/apps/v1/replicasets"), ref["name"]);
  EXPECT_EQ(rs["metadata"]["uid"], ref["uid"]);
  EXPECT_EQ(rs["spec"]["replicas"], 2);
  EXPECT_EQ(rs["spec"]["selector"]["matchLabels"], (json{{"app", "web"}}));
  EXPECT_EQ(rs["status"]["readyReplicas"], 2);
  EXPECT_EQ(kube.Get("/apis/apps/v1/namespaces/default/replicasets/" +
                     ref["name"].get<std::string>())["metadata"]["uid"],
            ref["uid"]);
  json sts = Item(kube.Get("/apis/apps/v1/namespaces/data/statefulsets"), "db");
  EXPECT_EQ(sts["spec"]["replicas"], 1);
  EXPECT_EQ(kube.Get("/apis/apps/v1/namespaces/default/statefulsets")["items"].size(), 0u);
  json ds = kube.Get("/apis/apps/v1/namespaces/default/daemonsets/agent");
  EXPECT_EQ(ds["status"]["desiredNumberScheduled"], 1);
}

TEST(KubeObjectsTest, BudgetsHaveTheDisruptionControllersStatus) {
  KubeFleet kube(kForecastFleet);
  ASSERT_TRUE(kube.status().ok()) << kube.status();
  json pdbs = kube.Get("/apis/policy/v1/poddisruptionbudgets");
  ASSERT_EQ(pdbs["items"].size(), 4u);
  // maxUnavailable 50% of the ReplicaSet's 2 replicas, rounded up: 1 may go.
  json web = Item(pdbs, "web");
  EXPECT_EQ(web["spec"]["maxUnavailable"], "50%");
  EXPECT_EQ(web["status"]["expectedPods"], 2);
  EXPECT_EQ(web["status"]["desiredHealthy"], 1);
  EXPECT_EQ(web["status"]["currentHealthy"], 2);
  EXPECT_EQ(web["status"]["disruptionsAllowed"], 1);
  EXPECT_EQ(web["status"]["conditions"][0]["reason"], "SufficientPods");
  json db = Item(pdbs, "db");
  EXPECT_EQ(db["status"]["desiredHealthy"], 1);
  EXPECT_EQ(db["status"]["disruptionsAllowed"], 0);
  // A DaemonSet has no scale subresource: the controller cannot count and allows nothing.
  json agent = Item(pdbs, "agent");
  EXPECT_EQ(agent["status"]["disruptionsAllowed"], 0);
  EXPECT_EQ(agent["status"]["conditions"][0]["reason"], "SyncFailed");
  // Discovery gives the short name kubectl resolves ("kubectl get pdb").
  EXPECT_EQ(kube.Get("/apis/policy/v1")["resources"][0]["shortNames"], json::array({"pdb"}));
  json api = Item(kube.Get("/apis/policy/v1/namespaces/default/poddisruptionbudgets"), "api");
  EXPECT_EQ(api["status"]["expectedPods"], 2);
  EXPECT_EQ(api["status"]["disruptionsAllowed"], 1);
}

TEST(KubeObjectsTest, StorageObjectsAreBoundAndLocalVolumesNameTheirNode) {
  KubeFleet kube(kForecastFleet);
  ASSERT_TRUE(kube.status().ok()) << kube.status();
  json pv = Item(kube.Get("/api/v1/persistentvolumes"), "pv-db-0");
  EXPECT_EQ(pv["status"]["phase"], "Bound");
  EXPECT_EQ(pv["spec"]["storageClassName"], "local");
  EXPECT_EQ(pv["spec"]["local"]["path"], "/var/mnt/pv-db-0");
  EXPECT_EQ(pv["spec"]["claimRef"]["namespace"], "data");
  EXPECT_EQ(pv["spec"]["claimRef"]["name"], "data-db-0");
  const json term = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]
                      ["matchExpressions"][0];
  EXPECT_EQ(term, (json{{"key", "kubernetes.io/hostname"},
                        {"operator", "In"},
                        {"values", json::array({"w-1"})}}));
  json pvc = Item(kube.Get("/api/v1/namespaces/data/persistentvolumeclaims"), "data-db-0");
  EXPECT_EQ(pvc["spec"]["volumeName"], "pv-db-0");
  EXPECT_EQ(pvc["status"]["phase"], "Bound");
  EXPECT_EQ(pvc["metadata"]["uid"], pv["spec"]["claimRef"]["uid"]);
  EXPECT_EQ(kube.Get("/api/v1/persistentvolumeclaims")["items"].size(), 1u);
  json sc = Item(kube.Get("/apis/storage.k8s.io/v1/storageclasses"), "local");
  EXPECT_EQ(sc["volumeBindingMode"], "WaitForFirstConsumer");
  EXPECT_EQ(sc["provisioner"], "kubernetes.io/no-provisioner");
}

TEST(KubeObjectsTest, ThousandsOfPodsAreReadInChunks) {
  std::string yaml = R"(
time_scale: 0.002
clusters:
  - name: big
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: w-1, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: w-2, talos: v1.11.6, kubernetes: 1.34.1}
    pods:
)";
  constexpr int kChunkedPods = 3000;
  for (int i = 0; i < kChunkedPods; ++i) {
    yaml += fmt::format("      - {{name: app-{}, namespace: ns-{}, node: w-{}, labels: {{app: a}}}}\n",
                        i, i % 7, 1 + i % 2);
  }
  KubeFleet kube(yaml);
  ASSERT_TRUE(kube.status().ok()) << kube.status();
  const size_t all = kube.Get("/api/v1/pods")["items"].size();
  ASSERT_GE(all, static_cast<size_t>(kChunkedPods));
  std::vector<std::string> keys;
  std::string token;
  int pages = 0;
  do {
    json page = kube.Get("/api/v1/pods?limit=500" +
                         (token.empty() ? "" : "&continue=" + token));
    ASSERT_LE(page["items"].size(), 500u);
    for (const auto& pod : page["items"]) {
      keys.push_back(pod["metadata"]["namespace"].get<std::string>() + "/" +
                     pod["metadata"]["name"].get<std::string>());
    }
    token = page["metadata"].value("continue", "");
    if (!token.empty()) {
      EXPECT_EQ(page["metadata"]["remainingItemCount"], all - keys.size());
    }
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(keys.size(), all);
  EXPECT_EQ(pages, static_cast<int>((all + 499) / 500));
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), all);
  // The node filter pages too, and an unreadable token is refused as the API server does.
  json w1 = kube.Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dw-1&limit=1000");
  EXPECT_EQ(w1["items"].size(), 1000u);
  EXPECT_FALSE(w1["metadata"].contains("remainingItemCount"));
  EXPECT_EQ(kube.Get("/api/v1/pods?limit=10&continue=garbage", 400)["reason"], "BadRequest");
}

// A cluster whose RBAC does not let the reader list what `deny_reads` names.
TEST(KubeObjectsTest, DeniedListsAnswerForbiddenAsTheApiServerDoes) {
  KubeFleet kube(R"(
time_scale: 0.002
clusters:
  - name: locked
    deny_reads: [pods, poddisruptionbudgets]
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
    pods:
      - {name: web-a, node: cp-1, labels: {app: web}}
    pdbs:
      - {name: web, selector: {app: web}, min_available: 1}
)");
  ASSERT_TRUE(kube.status().ok()) << kube.status();
  json all = kube.Get("/api/v1/pods", 403);
  EXPECT_EQ(all["reason"], "Forbidden");
  EXPECT_EQ(all["code"], 403);
  EXPECT_EQ(all["message"],
            "pods is forbidden: User \"admin@locked\" cannot list resource \"pods\" in API group "
            "\"\" at the cluster scope");
  EXPECT_EQ(all["details"], (json{{"kind", "pods"}}));
  EXPECT_EQ(kube.Get("/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3Dcp-1", 403)
                ["message"],
            "pods is forbidden: User \"admin@locked\" cannot list resource \"pods\" in API group "
            "\"\" in the namespace \"default\"");
  json pdbs = kube.Get("/apis/policy/v1/poddisruptionbudgets", 403);
  EXPECT_EQ(pdbs["message"],
            "poddisruptionbudgets.policy is forbidden: User \"admin@locked\" cannot list resource "
            "\"poddisruptionbudgets\" in API group \"policy\" at the cluster scope");
  EXPECT_EQ(pdbs["details"], (json{{"group", "policy"}, {"kind", "poddisruptionbudgets"}}));
  // What it does not name answers, and so does reading one pod.
  EXPECT_EQ(kube.Get("/api/v1/nodes")["items"].size(), 1u);
  EXPECT_EQ(kube.Get("/api/v1/persistentvolumes")["items"].size(), 0u);
  EXPECT_EQ(kube.Get("/api/v1/namespaces/default/pods/web-a")["metadata"]["name"], "web-a");
}

}  // namespace
}  // namespace tr::sim
