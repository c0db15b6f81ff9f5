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

}  // namespace tr::core
