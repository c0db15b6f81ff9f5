// The drain forecast: each pattern that holds a drain in a real cluster, named on the node
// whose drain meets it, and nothing named on a clean cluster.
#include "core/disruption_forecast.h"

#include <gtest/gtest.h>

#include "core/forecast_render.h"
#include "core/planner.h"

namespace tr::core {
namespace {

WorkloadPod Pod(std::string name, std::string node, LabelSet labels,
                std::string owner = "ReplicaSet") {
  WorkloadPod pod;
  pod.namespace_name = "default";
  pod.name = std::move(name);
  pod.node = std::move(node);
  pod.labels = std::move(labels);
  pod.owner_kind = std::move(owner);
  pod.owner_name = "owner";
  return pod;
}

DisruptionBudget MinAvailable(std::string name, LabelSet selector, int value,
                              bool percent = false) {
  return {"default", std::move(name), std::move(selector), CountOrPercent{value, percent},
          std::nullopt};
}

DisruptionBudget MaxUnavailable(std::string name, LabelSet selector, int value) {
  return {"default", std::move(name), std::move(selector), std::nullopt, CountOrPercent{value, false}};
}

// Three workers w-1..w-3 and one control plane cp-1 (which takes no workloads: NoSchedule is
// modelled as a node selector no workload pod has).
ClusterWorkloads Cluster() {
  ClusterWorkloads w;
  for (const char* name : {"w-1", "w-2", "w-3"}) w.nodes.push_back({name, {{"role", "worker"}}});
  return w;
}

const std::vector<std::vector<std::string>> kOrder = {{"w-1"}, {"w-2"}, {"w-3"}};

const NodeDrainForecast& NodeOf(const DrainForecast& f, const std::string& node) {
  for (const NodeDrainForecast& n : f.nodes) {
    if (n.node == node) return n;
  }
  ADD_FAILURE() << "no forecast for " << node;
  static const NodeDrainForecast none;
  return none;
}

// "kind pod" for each hazard of the node.
std::vector<std::string> Hazards(const DrainForecast& f, const std::string& node) {
  std::vector<std::string> out;
  for (const DrainHazard& h : NodeOf(f, node).hazards) {
    out.push_back(std::string(HazardKindName(h.kind)) + " " + h.pod);
  }
  return out;
}

using Names = std::vector<std::string>;

TEST(DisruptionForecast, CleanClusterMeetsNothing) {
  ClusterWorkloads w = Cluster();
  for (int i = 0; i < 3; ++i) {
    w.pods.push_back(Pod("web-" + std::to_string(i), "w-" + std::to_string(i + 1), {{"app", "web"}}));
  }
  w.budgets.push_back(MaxUnavailable("web", {{"app", "web"}}, 1));
  w.pods.push_back(Pod("agent-1", "w-1", {{"app", "agent"}}, "DaemonSet"));
  const DrainForecast f = ForecastDrains(w, kOrder, false);
  ASSERT_EQ(f.nodes.size(), 3u);
  for (const NodeDrainForecast& n : f.nodes) {
    EXPECT_TRUE(n.hazards.empty()) << n.node;
    EXPECT_EQ(n.blocked, 0);
  }
  EXPECT_EQ(f.better_order, "");
}

TEST(DisruptionForecast, SingleReplicaWithMinAvailableOneBlocks) {
  ClusterWorkloads w = Cluster();
  w.pods.push_back(Pod("db-0", "w-2", {{"app", "db"}}, "StatefulSet"));
  w.budgets.push_back(MinAvailable("db", {{"app", "db"}}, 1));
  const DrainForecast f = ForecastDrains(w, kOrder, false);
  EXPECT_EQ(Hazards(f, "w-1"), Names{});
  EXPECT_EQ(Hazards(f, "w-2"), Names{"budget default/db-0"});
  EXPECT_EQ(NodeOf(f, "w-2").blocked, 1);
  EXPECT_NE(NodeOf(f, "w-2").hazards[0].reason.find("budget default/db allows no eviction "
                                                    "(needs 1 healthy, has 1)"),
            std::string::npos);
  EXPECT_EQ(f.better_order, "") << "no order helps a budget that never allows an eviction";
}

TEST(DisruptionForecast, MaxUnavailableZeroBlocksEveryNodeItsPodsRunOn) {
  ClusterWorkloads w = Cluster();
  w.pods.push_back(Pod("api-a", "w-1", {{"app", "api"}}));
  w.pods.push_back(Pod("api-b", "w-3", {{"app", "api"}}));
  w.budgets.push_back(MaxUnavailable("api", {{"app", "api"}}, 0));
  const DrainForecast f = ForecastDrains(w, kOrder, true);
  EXPECT_EQ(Hazards(f, "w-1"), Names{"budget default/api-a"});
  // Forced off w-1, api-a goes to the least loaded node, w-2, where the budget holds it again.
  EXPECT_EQ(Hazards(f, "w-2"), Names{"budget default/api-a"});
  EXPECT_EQ(Hazards(f, "w-3"), Names{"budget default/api-b"});
  EXPECT_EQ(NodeOf(f, "w-3").hazards[0].reason,
            "budget default/api allows no eviction (needs 2 healthy, has 2)");
  EXPECT_EQ(NodeOf(f, "w-2").hazards[0].reason,
            "budget default/api allows no eviction (needs 2 healthy, has 2) (it came here when "
            "w-1 was forced)");
}

TEST(DisruptionForecast, TwoReplicasPinnedToOneNodeStayPendingAndTheSecondBlocks) {
  ClusterWorkloads w = Cluster();
  for (const char* name : {"pin-a", "pin-b"}) {
    WorkloadPod pod = Pod(name, "w-2", {{"app", "pin"}});
    pod.node_selector = {{"kubernetes.io/hostname", "w-2"}};
    w.pods.push_back(pod);
  }
  w.budgets.push_back(MinAvailable("pin", {{"app", "pin"}}, 1));
  const DrainForecast f = ForecastDrains(w, kOrder, false);
  EXPECT_EQ(Hazards(f, "w-2"), (Names{"no-room default/pin-a", "budget default/pin-b"}));
  EXPECT_NE(NodeOf(f, "w-2").hazards[0].reason.find("node selector matches no other node"),
            std::string::npos);
}

TEST(DisruptionForecast, UnmanagedPodIsDeletedAndNotRecreated) {
  ClusterWorkloads w = Cluster();
  w.pods.push_back(Pod("debug-shell", "w-1", {}, ""));
  const DrainForecast f = ForecastDrains(w, kOrder, false);
  EXPECT_EQ(Hazards(f, "w-1"), Names{"unmanaged default/debug-shell"});
  EXPECT_EQ(NodeOf(f, "w-1").blocked, 0);
}

// pg-0 on a volume of w-1's, pg-1 on w-2, at most one of them away.
ClusterWorkloads LocalPostgres() {
  ClusterWorkloads w = Cluster();
  WorkloadPod local = Pod("pg-0", "w-1", {{"app", "pg"}}, "StatefulSet");
  local.bound_node = "w-1";
  w.pods.push_back(local);
  w.pods.push_back(Pod("pg-1", "w-2", {{"app", "pg"}}, "StatefulSet"));
  w.budgets.push_back(MaxUnavailable("pg", {{"app", "pg"}}, 1));
  return w;
}

TEST(DisruptionForecast, LocalVolumeKeepsThePodPendingAndItsBudgetBlocksTheNextNode) {
  ClusterWorkloads w = LocalPostgres();
  // Drained together, w-1 and w-2: pg-0 waits for w-1 to come back, so pg-1 may not go.
  const DrainForecast together = ForecastDrains(w, {{"w-1", "w-2"}, {"w-3"}}, false);
  EXPECT_EQ(Hazards(together, "w-1"), Names{"no-room default/pg-0"});
  EXPECT_NE(NodeOf(together, "w-1").hazards[0].reason.find("its volume binds it to w-1"),
            std::string::npos);
  EXPECT_EQ(Hazards(together, "w-2"), Names{"budget default/pg-1"});
  // One at a time, w-1 is back before w-2 drains: nothing blocks.
  const DrainForecast apart = ForecastDrains(w, kOrder, false);
  EXPECT_EQ(Hazards(apart, "w-2"), Names{});
}

TEST(DisruptionForecast, EmptyDirAndHostPathDataAreNamed) {
  ClusterWorkloads w = Cluster();
  WorkloadPod cache = Pod("cache", "w-3", {});
  cache.empty_dir = true;
  cache.host_paths = {"/var/lib/cache"};
  w.pods.push_back(cache);
  const DrainForecast f = ForecastDrains(w, kOrder, false);
  EXPECT_EQ(Hazards(f, "w-3"), (Names{"local-data default/cache", "local-data default/cache"}));
  EXPECT_NE(NodeOf(f, "w-3").hazards[1].reason.find("hostPath /var/lib/cache stays behind on w-3"),
            std::string::npos);
}

TEST(DisruptionForecast, RequiredAntiAffinityWithEveryNodeTakenLeavesTheReplicaPending) {
  ClusterWorkloads w = Cluster();
  for (int i = 1; i <= 3; ++i) {
    WorkloadPod pod = Pod("zk-" + std::to_string(i), "w-" + std::to_string(i), {{"app", "zk"}});
    pod.anti_affinity = {{{"app", "zk"}}};
    w.pods.push_back(pod);
  }
  w.budgets.push_back(MaxUnavailable("zk", {{"app", "zk"}}, 1));
  const DrainForecast f = ForecastDrains(w, kOrder, false);
  // Each replica has no free node while its own is drained, and goes back to it once it is up.
  EXPECT_EQ(Hazards(f, "w-1"), Names{"no-room default/zk-1"});
  EXPECT_NE(NodeOf(f, "w-1").hazards[0].reason.find("anti-affinity"), std::string::npos);
  EXPECT_EQ(Hazards(f, "w-2"), Names{"no-room default/zk-2"});
  EXPECT_EQ(Hazards(f, "w-3"), Names{"no-room default/zk-3"});
  // With the first two drained at once, the second replica's eviction waits for the first.
  const DrainForecast together = ForecastDrains(w, {{"w-1", "w-2"}, {"w-3"}}, false);
  EXPECT_EQ(Hazards(together, "w-2"), Names{"budget default/zk-2"});
}

TEST(DisruptionForecast, TopologySpreadCountsTheDrainedNodeAndKeepsTheReplicaPending) {
  ClusterWorkloads w = Cluster();
  for (int i = 1; i <= 3; ++i) {
    WorkloadPod pod = Pod("s-" + std::to_string(i), "w-" + std::to_string(i), {{"app", "s"}});
    pod.spread = {{1, {{"app", "s"}}}};
    w.pods.push_back(pod);
  }
  // Off w-1, the replica would make 2 on a node against 0 on w-1 (cordoned, still a domain).
  const DrainForecast f = ForecastDrains(w, kOrder, false);
  EXPECT_EQ(Hazards(f, "w-1"), Names{"no-room default/s-1"});
  EXPECT_NE(NodeOf(f, "w-1").hazards[0].reason.find("topology spread"), std::string::npos);
}

TEST(DisruptionForecast, PercentBudgetRoundsUp) {
  ClusterWorkloads w = Cluster();
  w.pods.push_back(Pod("q-1", "w-1", {{"app", "q"}}));
  w.pods.push_back(Pod("q-2", "w-2", {{"app", "q"}}));
  w.pods.push_back(Pod("q-3", "w-3", {{"app", "q"}}));
  // 67 % of 3 is 2.01: it needs all 3 healthy, so no eviction is allowed.
  w.budgets.push_back(MinAvailable("q", {{"app", "q"}}, 67, true));
  const DrainForecast f = ForecastDrains(w, kOrder, false);
  EXPECT_EQ(Hazards(f, "w-1"), Names{"budget default/q-1"});
  EXPECT_NE(NodeOf(f, "w-1").hazards[0].reason.find("needs 3 healthy, has 3"), std::string::npos);
}

TEST(DisruptionForecast, AnUnhealthyReplicaElsewhereLeavesTheBudgetNoRoom) {
  ClusterWorkloads w = Cluster();
  w.pods.push_back(Pod("r-1", "w-1", {{"app", "r"}}));
  WorkloadPod sick = Pod("r-2", "w-3", {{"app", "r"}});
  sick.ready = false;
  w.pods.push_back(sick);
  w.budgets.push_back(MaxUnavailable("r", {{"app", "r"}}, 1));
  const DrainForecast f = ForecastDrains(w, kOrder, false);
  // Needs 1 healthy and has only r-1: r-1 may not go, wherever it runs.
  EXPECT_EQ(Hazards(f, "w-1"), Names{"budget default/r-1"});
  EXPECT_EQ(Hazards(f, "w-2"), Names{"budget default/r-1"});
  // The unhealthy pod may go while its budget is healthy (IfHealthyBudget).
  EXPECT_EQ(Hazards(f, "w-3"), Names{});
}

TEST(DisruptionForecast, NamesAnOrderThatLetsEveryDrainFinish) {
  ClusterWorkloads w = LocalPostgres();
  // Two workers at a time: w-1 and w-2 together block pg-1; w-2 after w-3 does not.
  const DrainForecast f = ForecastDrains(w, {{"w-1", "w-2"}, {"w-3"}}, false);
  EXPECT_EQ(NodeOf(f, "w-2").blocked, 1);
  EXPECT_EQ(f.better_order, "draining w-2 after w-3 lets every drain finish");
  w.budgets[0] = MaxUnavailable("pg", {{"app", "pg"}}, 0);
  EXPECT_EQ(ForecastDrains(w, {{"w-1", "w-2"}, {"w-3"}}, false).better_order, "")
      << "maxUnavailable 0 blocks in every order";
}

TEST(DisruptionForecast, APodUnderTwoBudgetsIsRefusedOutright) {
  ClusterWorkloads w = Cluster();
  for (int i = 1; i <= 3; ++i) {
    w.pods.push_back(Pod("t-" + std::to_string(i), "w-" + std::to_string(i),
                         {{"app", "t"}, {"tier", "front"}}));
  }
  w.budgets.push_back(MaxUnavailable("by-app", {{"app", "t"}}, 1));
  w.budgets.push_back(MaxUnavailable("by-tier", {{"tier", "front"}}, 1));
  const DrainForecast f = ForecastDrains(w, kOrder, false);
  EXPECT_EQ(Hazards(f, "w-1"), Names{"budget default/t-1"});
  EXPECT_NE(NodeOf(f, "w-1").hazards[0].reason.find(
                "budgets default/by-app and default/by-tier both select it"),
            std::string::npos);
}

TEST(DisruptionForecast, PlanForecastListsLegacyStepsAndDrainsTheFirstLifecycleStep) {
  ClusterWorkloads w = Cluster();
  w.pods.push_back(Pod("db-0", "w-2", {{"app", "db"}}, "StatefulSet"));
  w.budgets.push_back(MinAvailable("db", {{"app", "db"}}, 1));
  ClusterPlan plan;
  PlanStep legacy;
  legacy.from = *ParseTalosVersion("1.12.4");
  legacy.to = *ParseTalosVersion("1.13.0");
  legacy.batches = kOrder;
  PlanStep lifecycle;
  lifecycle.from = *ParseTalosVersion("1.13.0");
  lifecycle.to = *ParseTalosVersion("1.13.2");
  lifecycle.batches = kOrder;
  plan.steps = {legacy, lifecycle};
  const DrainForecast f = ForecastPlanDrains(plan, w, false);
  EXPECT_EQ(f.legacy_steps, Names{"Talos 1.12.4 → 1.13.0"});
  EXPECT_EQ(Hazards(f, "w-2"), Names{"budget default/db-0"});
  const std::string text = ForecastText(f, "");
  EXPECT_NE(text.find("w-2: waits the timeout, then halts before the reboot"), std::string::npos)
      << text;
  EXPECT_NE(text.find("policy.drain.onTimeout: force would finish every drain, deleting 1 pod(s)"),
            std::string::npos)
      << text;
  EXPECT_NE(ForecastMarkdown(f).find("| `w-2` | **blocks** `default/db-0`"), std::string::npos)
      << ForecastMarkdown(f);
}

TEST(DisruptionForecast, DurationsComeFromTheLastRolloutPerRole) {
  ClusterWorkloads w = Cluster();
  WorkloadNode cp;
  cp.name = "cp-1";
  cp.control_plane = true;
  w.nodes.push_back(cp);
  ClusterPlan plan;
  PlanStep step;
  step.from = *ParseTalosVersion("1.13.0");
  step.to = *ParseTalosVersion("1.13.2");
  step.batches = {{"w-1", "w-2"}, {"w-3"}, {"cp-1"}};
  plan.steps = {step};
  ClusterProfile profile;
  profile.policy.settle = std::chrono::seconds(10);
  for (const char* name : {"w-1", "w-2", "w-3", "cp-1"}) {
    NodeSpec node;
    node.name = name;
    node.role = std::string(name) == "cp-1" ? NodeRole::kControlPlane : NodeRole::kWorker;
    profile.nodes.push_back(node);
  }
  ClusterStatus status;
  auto took = [&](const std::string& node, int seconds) {
    NodeStatus n;
    n.name = node;
    n.last_upgrade_duration = std::chrono::seconds(seconds);
    status.nodes.push_back(n);
  };
  took("w-1", 100);
  took("w-2", 140);
  DrainForecast f = ForecastPlanDrains(plan, w, false);
  AddDurations(f, plan, profile, status);
  // w-3 has no record of its own: its role's range stands for it. No control plane has one.
  EXPECT_EQ(NodeOf(f, "w-3").duration_low, std::chrono::seconds(100));
  EXPECT_EQ(NodeOf(f, "w-3").duration_high, std::chrono::seconds(140));
  EXPECT_FALSE(NodeOf(f, "cp-1").duration_low.has_value());
  EXPECT_FALSE(f.duration_low.has_value()) << "not every node has a duration";
  took("cp-1", 200);
  f = ForecastPlanDrains(plan, w, false);
  AddDurations(f, plan, profile, status);
  // Batches: max(w-1, w-2), w-3, cp-1, each followed by the settle time.
  EXPECT_EQ(f.duration_low, std::chrono::seconds(100 + 10 + 100 + 10 + 200 + 10));
  EXPECT_EQ(f.duration_high, std::chrono::seconds(140 + 10 + 140 + 10 + 200 + 10));
  EXPECT_NE(ForecastText(f, "").find("Duration from earlier rollouts of this cluster: 7m10s–8m30s"),
            std::string::npos)
      << ForecastText(f, "");
}

TEST(DisruptionForecast, ManyPodsPlayInOnePass) {
  ClusterWorkloads w;
  for (int n = 0; n < 40; ++n) w.nodes.push_back({"n-" + std::to_string(n), {}});
  for (int i = 0; i < 20000; ++i) {
    w.pods.push_back(Pod("p-" + std::to_string(i), "n-" + std::to_string(i % 40),
                         {{"app", "a" + std::to_string(i % 500)}}));
  }
  for (int b = 0; b < 500; ++b) {
    w.budgets.push_back(MaxUnavailable("b" + std::to_string(b), {{"app", "a" + std::to_string(b)}}, 1));
  }
  std::vector<std::vector<std::string>> order;
  for (int n = 0; n < 40; ++n) order.push_back({"n-" + std::to_string(n)});
  const DrainForecast f = ForecastDrains(w, order, false);
  ASSERT_EQ(f.nodes.size(), 40u);
  for (const NodeDrainForecast& n : f.nodes) EXPECT_EQ(n.blocked, 0) << n.node;
}

}  // namespace
}  // namespace tr::core
