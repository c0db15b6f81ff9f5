// What the drain forecast reads, decoded from the Kubernetes API's JSON as a real API server
// writes it: owners, scheduling constraints, tolerations, volumes bound to a node, budgets with
// counts and percentages, nodes with taints; and nothing thrown on a field of another type.
#include "reconciler/clients/kube/workload_json.h"

#include <gtest/gtest.h>

namespace tr::reconciler::kube {
namespace {

using nlohmann::json;

const json kPods = json::parse(R"({"kind": "PodList", "items": [
  {"metadata": {"name": "pg-0", "namespace": "db", "labels": {"app": "pg"},
                "ownerReferences": [{"kind": "StatefulSet", "name": "pg", "controller": true}]},
   "spec": {"nodeName": "w-1",
            "nodeSelector": {"disk": "ssd"},
            "affinity": {
              "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                  {"key": "zone", "operator": "In", "values": ["a"]},
                  {"key": "rack", "operator": "In", "values": ["1", "2"]}]}]}},
              "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "pg"}},
                 "topologyKey": "kubernetes.io/hostname"},
                {"labelSelector": {"matchLabels": {"app": "pg"}},
                 "topologyKey": "topology.kubernetes.io/zone"}]}},
            "topologySpreadConstraints": [
              {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname",
               "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "pg"}}},
              {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
               "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "pg"}}}],
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "db",
                             "effect": "NoSchedule"},
                            {"key": "soft", "effect": "PreferNoSchedule"}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-pg-0"}},
                        {"name": "tmp", "emptyDir": {}},
                        {"name": "logs", "hostPath": {"path": "/var/log/pg"}}]},
   "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
  {"metadata": {"name": "kube-apiserver-cp-1", "namespace": "kube-system",
                "ownerReferences": [{"kind": "Node", "name": "cp-1", "controller": true}]},
   "spec": {"nodeName": "cp-1", "tolerations": [{"operator": "Exists"}]},
   "status": {"phase": "Running"}},
  {"metadata": {"name": "job-x", "namespace": "ci", "labels": "not an object"},
   "spec": {"nodeName": 7, "volumes": "nope"},
   "status": {"phase": "Succeeded"}}
]})");

TEST(WorkloadJson, PodsKeepWhatDecidesWhereTheyMayGo) {
  ClaimNodes claims{{"db/data-pg-0", "w-1"}};
  std::vector<core::WorkloadPod> pods;
  AddPods(kPods, claims, pods);
  ASSERT_EQ(pods.size(), 3u);
  const core::WorkloadPod& pg = pods[0];
  EXPECT_EQ(pg.namespace_name, "db");
  EXPECT_EQ(pg.owner_kind, "StatefulSet");
  EXPECT_EQ(pg.owner_name, "pg");
  EXPECT_TRUE(pg.ready);
  // The single-valued `In` of the only term joins the node selector; a two-valued one cannot.
  EXPECT_EQ(pg.node_selector, (core::LabelSet{{"disk", "ssd"}, {"zone", "a"}}));
  // Only hostname anti-affinity and DoNotSchedule spread keep a pod off a node here.
  ASSERT_EQ(pg.anti_affinity.size(), 1u);
  EXPECT_EQ(pg.anti_affinity[0], (core::LabelSet{{"app", "pg"}}));
  ASSERT_EQ(pg.spread.size(), 1u);
  EXPECT_EQ(pg.spread[0].max_skew, 2);
  EXPECT_EQ(pg.tolerations, std::vector<std::string>{"dedicated"});
  EXPECT_FALSE(pg.tolerates_all);
  EXPECT_TRUE(pg.empty_dir);
  EXPECT_EQ(pg.host_paths, std::vector<std::string>{"/var/log/pg"});
  EXPECT_EQ(pg.bound_node, "w-1");

  EXPECT_TRUE(pods[1].mirror) << "a static pod's mirror is owned by its Node";
  EXPECT_TRUE(pods[1].tolerates_all);
  EXPECT_FALSE(pods[1].ready);

  EXPECT_TRUE(pods[2].terminal);
  EXPECT_EQ(pods[2].node, "") << "a node name of another type is none";
  EXPECT_TRUE(pods[2].labels.empty());
  EXPECT_EQ(pods[2].owner_kind, "");
}

TEST(WorkloadJson, ClaimsBindToTheirVolumesNodeOrToTheirPodsForALocalClass) {
  const json volumes = json::parse(R"({"items": [
    {"metadata": {"name": "pv-local"},
     "spec": {"local": {"path": "/mnt/disk"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [
       {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                              "values": ["w-2"]}]}]}}}},
    {"metadata": {"name": "pv-nfs"}, "spec": {"nfs": {"server": "x"}}}]})");
  std::map<std::string, std::string> pinned;
  AddPinnedVolumes(volumes, pinned);
  EXPECT_EQ(pinned, (std::map<std::string, std::string>{{"pv-local", "w-2"}}));
  const json classes = json::parse(R"({"items": [
    {"metadata": {"name": "local-path"}, "provisioner": "rancher.io/local-path"},
    {"metadata": {"name": "ceph"}, "provisioner": "rook-ceph.rbd.csi.ceph.com"}]})");
  std::vector<std::string> local;
  AddLocalClasses(classes, local);
  EXPECT_EQ(local, std::vector<std::string>{"local-path"});
  const json claims = json::parse(R"({"items": [
    {"metadata": {"name": "a", "namespace": "db"}, "spec": {"volumeName": "pv-local"}},
    {"metadata": {"name": "b", "namespace": "db"}, "spec": {"volumeName": "pv-nfs"}},
    {"metadata": {"name": "c", "namespace": "db"},
     "spec": {"volumeName": "pvc-123", "storageClassName": "local-path"}},
    {"metadata": {"name": "d", "namespace": "db"},
     "spec": {"volumeName": "pvc-456", "storageClassName": "ceph"}}]})");
  ClaimNodes bound;
  AddClaims(claims, pinned, {"local-path"}, bound);
  EXPECT_EQ(bound, (ClaimNodes{{"db/a", "w-2"}, {"db/c", kOnItsNode}}));
}

TEST(WorkloadJson, BudgetsTakeCountsAndPercentsAndNodesTheirTaints) {
  const json budgets = json::parse(R"({"items": [
    {"metadata": {"name": "a", "namespace": "x"},
     "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "a"}}}},
    {"metadata": {"name": "b", "namespace": "x"},
     "spec": {"maxUnavailable": "25%", "selector": {"matchLabels": {"app": "b"}}}},
    {"metadata": {"name": "c", "namespace": "x"},
     "spec": {"maxUnavailable": "lots", "selector": {}}},
    {"metadata": {"name": "no-selector", "namespace": "x"}, "spec": {"minAvailable": 1}}]})");
  std::vector<core::DisruptionBudget> out;
  AddBudgets(budgets, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].min_available, (core::CountOrPercent{2, false}));
  EXPECT_EQ(out[0].selector, (core::LabelSet{{"app", "a"}}));
  EXPECT_EQ(out[1].max_unavailable, (core::CountOrPercent{25, true}));
  EXPECT_FALSE(out[2].max_unavailable.has_value()) << "not a count or a percentage";
  EXPECT_TRUE(out[2].selector.empty()) << "{} selects every pod of its namespace";
  // "no-selector" is left out: a null selector matches no pod.

  const json nodes = json::parse(R"({"items": [
    {"metadata": {"name": "cp-1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
     "spec": {"unschedulable": true, "taints": [
       {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
       {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
       {"key": "soft", "effect": "PreferNoSchedule"}]},
     "status": {"conditions": [{"type": "Ready", "status": "True"}]}}]})");
  std::vector<core::WorkloadNode> seen;
  AddNodes(nodes, seen);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0].control_plane);
  EXPECT_FALSE(seen[0].schedulable);
  EXPECT_TRUE(seen[0].ready);
  EXPECT_EQ(seen[0].taints, std::vector<std::string>{"node-role.kubernetes.io/control-plane"});
}

}  // namespace
}  // namespace tr::reconciler::kube
