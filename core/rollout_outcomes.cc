#include "core/rollout_outcomes.h"

#include <string>

#include "fmt/format.h"

namespace tr::core {
namespace {

std::string OnNode(std::string_view node) {
  return node.empty() ? std::string() : " on " + std::string(node);
}

// What a running step is doing, in the words people read in the status.
std::string Doing(const RolloutDecision& d) {
  switch (d.kind) {
    case ActionKind::kPrePullImage:
      return fmt::format("pre-pulling {} on {} node(s)", d.image, d.nodes.size());
    case ActionKind::kSnapshotEtcd:
      return "saving an etcd snapshot before the first control plane";
    case ActionKind::kInstallImage:
      return fmt::format("installing {} on {}", d.image, d.node);
    case ActionKind::kDrainNode:
      return fmt::format("draining {} before its reboot", d.node);
    default:
      return d.message;
  }
}

}  // namespace

RolloutDecision ActionRefused(const RolloutDecision& tried, const ClusterProfile& profile,
                              std::string_view error, TimePoint now) {
  RolloutDecision d = tried;
  d.kind = ActionKind::kFailNode;
  d.phase = ClusterPhase::kUpgradeFailed;
  d.message = fmt::format("{} on {} failed: {}", ActionKindName(tried.kind),
                          tried.node.empty() ? profile.name : tried.node, error);
  d.failure = RolloutFailure{tried.node, profile.talos_version, d.message, now, "", profile.retry_token};
  return d;
}

RolloutDecision StillRunning(const RolloutDecision& running, std::string_view why,
                             TimePoint next_look) {
  RolloutDecision d = running;
  d.kind = ActionKind::kNone;
  d.message = fmt::format("{}{} ({})", Doing(running),
                          why.empty() ? std::string() : ": " + std::string(why),
                          running.progress.ToString());
  d.wait_until = next_look;
  return d;
}

RolloutDecision HeldByRunningStep(const RolloutDecision& held, ActionKind busy_kind,
                                  std::string_view busy_node, TimePoint next_look) {
  RolloutDecision d = held;
  d.kind = ActionKind::kNone;
  d.message = fmt::format("waiting for {}{} to finish before {}{} ({})", ActionKindName(busy_kind),
                          OnNode(busy_node), ActionKindName(held.kind), OnNode(held.node),
                          held.progress.ToString());
  d.wait_until = next_look;
  return d;
}

RolloutDecision DryRun(const RolloutDecision& decision) {
  RolloutDecision d = decision;
  d.message = "dry run, not done: " + decision.message;
  return d;
}

RolloutDecision Blocked(std::string_view why) {
  RolloutDecision d;
  d.phase = ClusterPhase::kBlocked;
  d.message = std::string(why);
  return d;
}

bool LooksAgainOnNodePoll(const RolloutDecision& decision, const RolloutMemory& memory) {
  const bool settling = memory.in_flight.empty() && memory.settle_until && decision.wait_until &&
                        *decision.wait_until == *memory.settle_until;
  return decision.phase == ClusterPhase::kUpgradingTalos && !settling;
}

RolloutDecision FollowingKubernetesTask(const RolloutDecision& handed, const PlanStep& step,
                                        const KubernetesTask& task, TimePoint next_look) {
  RolloutDecision d = handed;
  d.kind = ActionKind::kNone;
  d.wait_until = next_look;
  const std::string hop =
      fmt::format("upgrading Kubernetes {} → {}", step.from.ToString(), step.to.ToString());
  if (task.state == KubernetesTask::State::kFailed) {
    d.phase = ClusterPhase::kUpgradeFailed;
    d.message = fmt::format("Kubernetes upgrade to {} failed: {}{}: {}", step.to.ToString(),
                            task.component, task.node.empty() ? "" : " on " + task.node,
                            task.error);
    d.node = task.node;
    return d;
  }
  d.phase = ClusterPhase::kUpgradingKubernetes;
  d.message = task.state == KubernetesTask::State::kSucceeded
                  ? hop + ": done, waiting for the nodes to show it"
              : task.progress.empty() ? hop + ": starting"
                                      : hop + ": " + task.progress;
  return d;
}

}  // namespace tr::core
