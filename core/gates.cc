#include "core/gates.h"

#include <algorithm>

#include "core/duration.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

std::string FormatWindow(const MaintenanceWindow& w) {
  std::string days;
  for (int d : w.days) days += (days.empty() ? "" : ",") + std::string(WeekdayName(d));
  return fmt::format("{} {:02}:{:02} for {} ({})", days, w.start.count() / 60, w.start.count() % 60,
                     FormatDuration(w.duration), w.timezone);
}

bool TouchesControlPlane(const ClusterProfile& profile, const PlanStep& step) {
  const std::vector<std::string> nodes = step.Nodes();
  return std::any_of(nodes.begin(), nodes.end(),
                     [&](const std::string& name) { return IsControlPlane(profile, name); });
}

std::string DescribeCheck(const HealthCheck& c) {
  std::string what;
  switch (c.kind) {
    case HealthCheck::Kind::kHttp:
      what = fmt::format("GET {} answers {}", c.url, c.expect_status);
      break;
    case HealthCheck::Kind::kPrometheus:
      what = fmt::format("Prometheus {} query \"{}\" is {}", c.url, c.query,
                         c.max_value ? fmt::format("<= {}", *c.max_value) : "a single number");
      break;
    case HealthCheck::Kind::kKubernetes:
      what = fmt::format("{} {} in namespace {} rolled out", c.workload_kind,
                         !c.workload_name.empty()     ? c.workload_name
                         : !c.label_selector.empty() ? "matching " + c.label_selector
                                                      : "(all)",
                         c.namespace_name);
      break;
  }
  return fmt::format(
      "health check {}: {} (within {}), before the first node of a step and after each node",
      c.name, what, FormatDuration(c.timeout));
}

std::string DescribePromotion(const Promotion& p) {
  std::string names;
  for (const Promotion::After& a : p.after) names += (names.empty() ? "" : ", ") + a.cluster;
  return fmt::format("promotion: starts only after {} ran the new versions, Ready, for {}", names,
                     FormatDuration(p.soak));
}

}  // namespace

std::vector<std::string> PlanGates(const ClusterProfile& profile, const ClusterPlan& plan) {
  const Policy& policy = profile.policy;
  bool talos = false, control_plane = false, kubernetes = false, legacy = false;
  for (const PlanStep& step : plan.steps) {
    if (step.type == StepType::kKubernetes) {
      kubernetes = true;
      continue;
    }
    talos = true;
    legacy = legacy || !UsesLifecycleApi(step.from);
    control_plane = control_plane || TouchesControlPlane(profile, step);
  }
  std::vector<std::string> gates;
  if (profile.promotion) gates.push_back(DescribePromotion(*profile.promotion));
  if (policy.paused) gates.push_back("paused: nothing starts until policy.paused is false");
  for (const MaintenanceWindow& w : policy.windows) {
    gates.push_back("maintenance window: " + FormatWindow(w) + "; nodes start only inside it");
  }
  gates.push_back("pre-flight: every node reachable and Ready");
  if (talos || kubernetes) {
    gates.push_back(
        "pre-flight: etcd has every member started and healthy, and at least 3 "
        "members (or a single control plane)");
  }
  if (talos) {
    gates.push_back(
        "pre-flight: installer image pulled on every node before the first is "
        "touched");
  }
  if (legacy) {
    // v1alpha1_images.go pulls into the CRI containerd, install/pull.go into the system one.
    gates.push_back(
        "below Talos 1.13 that pre-pull only proves the image exists: it lands in the CRI "
        "containerd, and each node's Upgrade pulls the image again into its system containerd");
  }
  if (control_plane && policy.etcd_snapshot) {
    gates.push_back("etcd snapshot saved before the first control plane");
  }
  if (talos) {
    gates.push_back(fmt::format(
        "after each node, within {}: new boot id, Talos version is the target, machine "
        "RUNNING and ready, Kubernetes node Ready and schedulable; control planes: etcd "
        "member healthy and not a learner",
        FormatDuration(policy.node_timeout)));
  }
  if (kubernetes) {
    gates.push_back(
        "Kubernetes: one minor per step; control-plane components node by node, "
        "then kubelets (control planes, then workers)");
  }
  for (const HealthCheck& check : policy.health_checks) gates.push_back(DescribeCheck(check));
  if (!policy.health_checks.empty()) {
    gates.push_back(fmt::format(
        "a failing health check holds the next node (WaitingForGate); after gateTimeout {} "
        "the rollout fails",
        FormatDuration(policy.gate_timeout)));
  }
  if (talos) {
    gates.push_back(fmt::format("settle {} after each node", FormatDuration(policy.settle)));
  }
  gates.push_back(policy.on_failure == FailureAction::kRollback
                      ? "on failure: roll the node back, then halt; no further node is touched"
                      : "on failure: halt; no further node is touched");
  return gates;
}

std::chrono::seconds EstimateDuration(const ClusterProfile& profile,
                                      const ObservedCluster& observed, const ClusterPlan& plan) {
  std::chrono::seconds total{0};
  for (const PlanStep& step : plan.steps) {
    for (const auto& batch : step.batches) {
      std::chrono::seconds slowest{0};
      for (const std::string& name : batch) {
        std::chrono::seconds node_time = kDefaultKubeletDuration;
        const NodeObservation* seen = observed.FindNode(name);
        const bool cp = IsControlPlane(profile, name);
        if (step.type == StepType::kTalos) {
          node_time = seen && seen->last_upgrade_duration ? *seen->last_upgrade_duration
                                                          : kDefaultTalosNodeDuration;
        } else if (cp) {
          node_time += kDefaultControlPlaneComponentsDuration;
        }
        slowest = std::max(slowest, node_time);
      }
      total += slowest;
      if (step.type == StepType::kTalos) total += profile.policy.settle;
    }
  }
  return total;
}

}  // namespace tr::core
