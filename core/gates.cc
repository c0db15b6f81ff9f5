#include "core/gates.h"

#include <algorithm>

#include "core/duration.h"
#include "core/start_checks.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

bool TouchesControlPlane(const ClusterProfile& profile, const PlanStep& step) {
  const std::vector<std::string> nodes = step.Nodes();
  return std::any_of(nodes.begin(), nodes.end(),
                     [&](const std::string& name) { return IsControlPlane(profile, name); });
}

// What the reconciler's own drain does (Talos 1.13+; below, Talos drains the node itself).
std::string DrainGate(const DrainPolicy& drain) {
  const std::string timeout =
      drain.timeout ? FormatDuration(*drain.timeout) : std::string("run's --drain-timeout");
  return fmt::format(
      "from Talos 1.13 each node is cordoned and drained before its reboot, PodDisruptionBudgets "
      "honoured; pods still there after {}: {}",
      timeout,
      drain.on_timeout == DrainTimeoutAction::kForce
          ? "deleted past their budgets, and the upgrade goes on (drain.onTimeout: force)"
          : "the rollout halts before the node reboots (drain.onTimeout: halt)");
}

}  // namespace

std::vector<std::string> PlanGates(const ClusterProfile& profile, const ClusterPlan& plan,
                                   const StartCheckAnswers* answers) {
  const Policy& policy = profile.policy;
  bool talos = false, control_plane = false, kubernetes = false, legacy = false, lifecycle = false;
  for (const PlanStep& step : plan.steps) {
    if (step.type == StepType::kKubernetes) {
      kubernetes = true;
      continue;
    }
    talos = true;
    legacy = legacy || !UsesLifecycleApi(step.from);
    lifecycle = lifecycle || UsesLifecycleApi(step.from);
    control_plane = control_plane || TouchesControlPlane(profile, step);
  }
  std::vector<std::string> gates;
  for (StartCheck check : StartChecks(profile)) {
    for (std::string& line : DescribeStartCheck(check, profile, answers)) {
      gates.push_back(std::move(line));
    }
  }
  const bool ahead = policy.install == InstallTiming::kAhead;
  if (lifecycle && ahead) {
    gates.push_back(
        "install: ahead: a Talos step from 1.13 or later pulls and installs its installer on "
        "every node of the step first, one node at a time, outside any window, with no cordon, "
        "drain or reboot; a maintenance window then holds only each node's drain, reboot and "
        "checks");
  } else if (lifecycle) {
    gates.push_back(
        "before the first node of a Talos step from 1.13 or later: its installer image pulled "
        "on every node of the step");
  }
  if (legacy && ahead) {
    gates.push_back(
        "install: ahead does not apply below Talos 1.13: the legacy Upgrade installs and "
        "reboots in one call, so those steps install inside the window");
  }
  if (lifecycle) gates.push_back(DrainGate(policy.drain));
  if (legacy) {
    // v1alpha1_images.go pulls into the CRI containerd, install/pull.go into the system one.
    gates.push_back(
        "below Talos 1.13 nodes are not pre-pulled: each node's Upgrade pulls the image into "
        "its system containerd itself (a pull into the CRI one would spare it nothing) and "
        "refuses an image it cannot pull before it touches the node");
  }
  if (control_plane && policy.etcd_snapshot) {
    gates.push_back("etcd snapshot saved before the first control plane");
  }
  if (talos) {
    gates.push_back(fmt::format(
        "after each node, within {}: new boot id, Talos version {}is the target, machine "
        "RUNNING and ready, Kubernetes node Ready and schedulable; control planes: etcd "
        "member healthy and not a learner",
        FormatDuration(policy.node_timeout),
        profile.talos_schematic_id.empty() ? "" : "and schematic "));
  }
  if (kubernetes) {
    gates.push_back(
        "Kubernetes: one minor per step; control-plane components node by node, "
        "then kubelets (control planes, then workers)");
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
