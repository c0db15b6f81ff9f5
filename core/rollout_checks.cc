#include "core/rollout_checks.h"

#include <algorithm>

#include "fmt/format.h"

namespace tr::core {
namespace {

bool NewBoot(const NodeObservation& seen, const OperationInFlight& op) {
  return op.boot_id_before.empty() || (!seen.boot_id.empty() && seen.boot_id != op.boot_id_before);
}

// What the node booted, for a message: "Talos 1.12.0" or "Talos 1.14.0 with schematic <id>".
std::string Booted(const NodeObservation& seen, const OperationInFlight& op) {
  std::string what = "Talos " + seen.talos->ToString();
  if (!op.schematic.empty() && *seen.talos == op.target) {
    what += " with schematic " + RunningSchematic(seen).value_or("?");
  }
  return what;
}

}  // namespace

bool RunsTarget(const NodeObservation& seen, const OperationInFlight& op) {
  if (!seen.talos || *seen.talos != op.target) return false;
  return op.schematic.empty() || RunningSchematic(seen) == op.schematic;
}

bool NodeVerified(const ClusterProfile& profile, const NodeObservation& seen,
                  const OperationInFlight& op) {
  if (!seen.reachable || !RunsTarget(seen, op)) return false;
  if (!NewBoot(seen, op) || seen.stage != MachineStage::kRunning || !seen.ready) return false;
  // Talos uncordons by itself after a legacy upgrade; after a lifecycle one we uncordon.
  if (!op.lifecycle && !seen.schedulable) return false;
  if (IsControlPlane(profile, op.node) && (!seen.etcd_member || !seen.etcd_healthy)) return false;
  return true;
}

InFlightEtcd EtcdOfNodeInFlight(const NodeObservation& seen, const OperationInFlight& op) {
  const bool told_to_go_down =
      op.phase == OperationPhase::kUpgradeCalled || op.phase == OperationPhase::kRebootCalled;
  if (!told_to_go_down) return InFlightEtcd::kAsk;
  if (!NewBoot(seen, op)) return InFlightEtcd::kKeep;
  return seen.stage == MachineStage::kRunning && seen.ready ? InFlightEtcd::kAsk
                                                            : InFlightEtcd::kUnknown;
}

std::string NodeCameBackWrong(const NodeObservation& seen, const OperationInFlight& op) {
  // Once a lifecycle install is recorded the new slot is armed, so any new boot should be on
  // the target (the reboot may have been sent just before a restart, unrecorded).
  const bool asked =
      op.phase == OperationPhase::kUpgradeCalled || op.phase == OperationPhase::kRebootCalled ||
      (op.lifecycle &&
       (op.phase == OperationPhase::kInstalled || op.phase == OperationPhase::kDrained));
  if (!asked || !seen.reachable || !seen.talos || RunsTarget(seen, op)) return "";
  if (op.boot_id_before.empty() || !NewBoot(seen, op) || seen.stage != MachineStage::kRunning) {
    return "";
  }
  if (*seen.talos == op.target && !RunningSchematic(seen)) return "";  // not read yet
  const std::string target = op.schematic.empty() ? op.target.ToString()
                                                  : fmt::format("{} with schematic {}",
                                                                op.target.ToString(), op.schematic);
  return fmt::format(
      "node {} came back on {} instead of {}: the new image did not boot and the node fell back "
      "to its previous slot",
      op.node, Booted(seen, op), target);
}

std::string OnTargetNotReady(const NodeObservation& seen, const OperationInFlight& op) {
  if (!seen.reachable || !RunsTarget(seen, op) || !NewBoot(seen, op)) return "";
  if (seen.stage != MachineStage::kRunning || seen.ready) return "";
  return fmt::format(": it runs Talos {} but is not Ready (Talos does not roll it back for that)",
                     op.target.ToString());
}

bool NodeUntouched(const NodeObservation& seen, const OperationInFlight& op) {
  return seen.reachable && seen.talos && !RunsTarget(seen, op) &&
         (op.boot_id_before.empty() || seen.boot_id == op.boot_id_before) &&
         seen.stage == MachineStage::kRunning;
}

std::string DescribeInFlight(const OperationInFlight& op, const NodeObservation* seen) {
  const std::string target = op.target.ToString();
  const bool reboot_asked = op.phase == OperationPhase::kUpgradeCalled ||
                            op.phase == OperationPhase::kRebootCalled ||
                            op.phase == OperationPhase::kDrained;
  if (seen == nullptr || !seen->reachable) {
    return reboot_asked ? fmt::format("{} rebooting into {}", op.node, target)
                        : fmt::format("{} is not answering", op.node);
  }
  if (seen->talos && RunsTarget(*seen, op) && NewBoot(*seen, op)) {
    return fmt::format("{} back on {}, waiting for it to become healthy", op.node, target);
  }
  switch (seen->stage) {
    case MachineStage::kRebooting:
    case MachineStage::kShuttingDown:
      return fmt::format("{} rebooting into {}", op.node, target);
    case MachineStage::kUpgrading:
      return fmt::format("{} upgrading to {}", op.node, target);
    case MachineStage::kBooting:
      return fmt::format("{} booting", op.node);
    default:
      break;
  }
  switch (op.phase) {
    case OperationPhase::kRecorded:
      return fmt::format("{} {} {}", op.node, op.lifecycle ? "installing" : "upgrading to", target);
    case OperationPhase::kInstalled:
      return fmt::format("{} draining before its reboot into {}", op.node, target);
    case OperationPhase::kUpgradeCalled:
      return fmt::format("{} upgrading to {}", op.node, target);
    case OperationPhase::kDrained:
    case OperationPhase::kRebootCalled:
      return fmt::format("{} rebooting into {}", op.node, target);
  }
  return op.node;
}

std::string NodesNotReadyProblem(const ClusterProfile& profile, const ObservedCluster& observed,
                                 const RolloutMemory& memory) {
  for (const NodeSpec& node : profile.nodes) {
    if (memory.InFlight(node.name)) continue;
    const NodeObservation* seen = observed.FindNode(node.name);
    if (!seen || !seen->reachable) return fmt::format("node {} is unreachable", node.name);
    if (seen->stage != MachineStage::kRunning || !seen->ready) {
      return fmt::format("node {} is not Ready", node.name);
    }
  }
  return "";
}

std::string EtcdQuorumProblem(const ClusterProfile& profile, const ObservedCluster& observed,
                              const RolloutMemory& memory) {
  int control_planes = 0, members = 0;
  for (const NodeSpec& node : profile.nodes) {
    if (node.role != NodeRole::kControlPlane) continue;
    ++control_planes;
    const NodeObservation* seen = observed.FindNode(node.name);
    if (seen && seen->etcd_member) ++members;
    if (memory.InFlight(node.name)) continue;
    if (!seen || !seen->etcd_member) {
      return fmt::format("etcd member on {} is not started", node.name);
    }
    if (!seen->etcd_healthy) return fmt::format("etcd member on {} is not healthy", node.name);
  }
  if (control_planes > 1 && members < 3) {
    return fmt::format(
        "etcd has {} members; upgrading one would lose quorum (at least 3 are "
        "needed, or a single control plane)",
        members);
  }
  return "";
}

std::optional<std::string> NextStartableNode(const ClusterProfile& profile, const PlanStep& step,
                                             const RolloutMemory& memory) {
  std::optional<std::string> next;
  for (const std::string& node : step.Nodes()) {
    if (!memory.InFlight(node)) {
      next = node;
      break;
    }
  }
  if (!next || memory.in_flight.empty()) return next;
  if (RoomBesideInFlight(profile, memory) && !IsControlPlane(profile, *next)) return next;
  return std::nullopt;
}

bool RoomBesideInFlight(const ClusterProfile& profile, const RolloutMemory& memory) {
  if (memory.in_flight.empty()) return true;
  const bool only_workers =
      std::none_of(memory.in_flight.begin(), memory.in_flight.end(),
                   [&](const OperationInFlight& op) { return IsControlPlane(profile, op.node); });
  return only_workers &&
         static_cast<int>(memory.in_flight.size()) < profile.policy.max_parallel_workers;
}

Version TalosStepTarget(const ClusterProfile& profile, const ClusterPlan& plan) {
  if (!plan.steps.empty() && plan.steps.front().type == StepType::kTalos) {
    return plan.steps.front().to;
  }
  return profile.talos_version;
}

bool CountsAsMoved(const ClusterProfile& profile, const std::string& node, const Version& target,
                   const std::optional<Version>& talos,
                   const std::optional<std::string>& schematic) {
  if (!talos || *talos != target) return false;
  if (target != profile.talos_version) return true;
  const std::string desired = DesiredSchematicId(profile, node);
  return desired.empty() || schematic == desired;
}

Progress TalosProgress(const ClusterProfile& profile, const ClusterPlan& plan,
                       const ObservedCluster& observed) {
  const Version target = TalosStepTarget(profile, plan);
  Progress p{0, static_cast<int>(profile.nodes.size())};
  for (const NodeSpec& node : profile.nodes) {
    const NodeObservation* seen = observed.FindNode(node.name);
    if (seen && CountsAsMoved(profile, node.name, target, seen->talos, LastSeenSchematic(*seen))) {
      ++p.done;
    }
  }
  return p;
}

}  // namespace tr::core
