#include "core/rollout.h"

#include <algorithm>

#include "core/duration.h"
#include "core/gates.h"
#include "core/health_gates.h"
#include "core/install_ahead.h"
#include "core/rollout_checks.h"
#include "core/rollout_record.h"
#include "core/start_checks.h"
#include "core/timestamp.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

RolloutDecision Decision(ActionKind kind, ClusterPhase phase, std::string message,
                         Progress progress) {
  RolloutDecision d;
  d.kind = kind;
  d.phase = phase;
  d.message = std::move(message);
  d.progress = progress;
  return d;
}

RolloutDecision Wait(ClusterPhase phase, std::string message, TimePoint until, Progress progress) {
  RolloutDecision d = Decision(ActionKind::kNone, phase, std::move(message), progress);
  d.wait_until = until;
  return d;
}

// What each node in flight is doing, with the rollout's progress; `instead` (when set) in place
// of the operation of its node.
std::string DescribeEveryInFlight(const RolloutInput& in, Progress progress,
                                  const OperationInFlight* instead = nullptr) {
  std::string doing;
  for (const OperationInFlight& op : in.memory.in_flight) {
    const OperationInFlight& shown = instead != nullptr && instead->node == op.node ? *instead : op;
    doing += (doing.empty() ? "" : "; ") + DescribeInFlight(shown, in.observed.FindNode(op.node));
  }
  return fmt::format("{} ({})", doing, progress.ToString());
}

// Look again at the nodes in flight after the poll interval (longer while they are heard), or
// at the first deadline; the message says what each is doing.
RolloutDecision WaitForInFlight(const RolloutInput& in, Progress progress) {
  TimePoint until = in.now + in.poll_interval * (in.in_flight_heard ? kHeardPollFactor : 1);
  for (const OperationInFlight& op : in.memory.in_flight) until = std::min(until, op.deadline);
  return Wait(ClusterPhase::kUpgradingTalos, DescribeEveryInFlight(in, progress), until, progress);
}

// What the status says while `next` runs on `op`'s node. The Upgrade and reboot calls say what
// the looks after them say (the operation in the phase their record gives it): the status the
// look after the call makes is then the one recorded before it, and is not written again, one
// status file less a node (docs/benchmarks.md).
std::string ActionMessage(const RolloutInput& in, const OperationInFlight& op, ActionKind next,
                          const std::string& label, Progress progress) {
  OperationInFlight called = op;
  if (next == ActionKind::kCallUpgrade) {
    called.phase = OperationPhase::kUpgradeCalled;
  } else if (next == ActionKind::kRebootNode) {
    called.phase = OperationPhase::kRebootCalled;
  } else {
    return fmt::format("upgrading {}: {}", label, ActionKindName(next));
  }
  return DescribeEveryInFlight(in, progress, &called);
}

RolloutDecision Failure(const RolloutInput& in, const OperationInFlight& op, std::string why,
                        Progress progress) {
  const NodeObservation* seen = in.observed.FindNode(op.node);
  // A rollback needs a node that answers and runs the new version but is not healthy.
  const bool can_roll_back = in.profile.policy.on_failure == FailureAction::kRollback && seen &&
                             seen->reachable && RunsTarget(*seen, op);
  RolloutDecision d = Decision(can_roll_back ? ActionKind::kRollbackNode : ActionKind::kFailNode,
                               ClusterPhase::kUpgradeFailed, why, progress);
  d.node = op.node;
  d.failure =
      RolloutFailure{op.node, op.target, std::move(why), in.now, op.schematic, in.profile.retry_token};
  return d;
}

// The next step for a node whose operation is recorded; nullopt while it is still working.
std::optional<RolloutDecision> AdvanceOperation(const RolloutInput& in, const OperationInFlight& op,
                                                Progress progress) {
  const NodeObservation* seen = in.observed.FindNode(op.node);
  const std::string label = fmt::format("{} ({})", op.node, progress.ToString());
  if (seen && NodeVerified(in.profile, *seen, op)) {
    RolloutDecision d =
        Decision(ActionKind::kCompleteNode, ClusterPhase::kUpgradingTalos,
                 fmt::format("{} healthy on Talos {}", label, op.target.ToString()), progress);
    d.node = op.node;
    d.seen_cordoned = !seen->schedulable;
    return d;
  }
  if (seen) {
    if (std::string problem = NodeCameBackWrong(*seen, op); !problem.empty()) {
      return Failure(in, op, problem, progress);
    }
  }
  if (in.now >= op.deadline) {
    return Failure(in, op,
                   fmt::format("node {} did not become healthy on Talos {} within {}{}", op.node,
                               op.target.ToString(),
                               FormatDuration(std::chrono::duration_cast<std::chrono::seconds>(
                                   op.deadline - op.started)),
                               seen ? OnTargetNotReady(*seen, op) : std::string()),
                   progress);
  }
  ActionKind next = ActionKind::kNone;
  switch (op.phase) {
    case OperationPhase::kRecorded:
      // Ask only a node that is plainly still on its old boot; one that is already upgrading
      // or rebooting got the call before a restart.
      if (seen && NodeUntouched(*seen, op)) {
        next = op.lifecycle ? ActionKind::kInstallImage : ActionKind::kCallUpgrade;
      }
      break;
    case OperationPhase::kInstalled:
      if (seen && NodeUntouched(*seen, op)) next = ActionKind::kDrainNode;
      break;
    case OperationPhase::kDrained:
      // After a restart the reboot may have been sent already: reboot only the old boot.
      if (seen && NodeUntouched(*seen, op)) next = ActionKind::kRebootNode;
      break;
    case OperationPhase::kUpgradeCalled:
    case OperationPhase::kRebootCalled:
      break;
  }
  if (next == ActionKind::kNone) return std::nullopt;
  RolloutDecision d = Decision(next, ClusterPhase::kUpgradingTalos,
                               ActionMessage(in, op, next, label, progress), progress);
  d.node = op.node;
  d.image = op.image;
  d.boot_id = seen->boot_id;
  return d;
}

RolloutDecision StartNode(const RolloutInput& in, const PlanStep& step, const std::string& node,
                          Progress progress) {
  const NodeObservation& seen = *in.observed.FindNode(node);
  OperationInFlight op;
  op.node = node;
  op.target = step.to;
  op.image = InstallerFor(step, node);
  op.schematic = SchematicFor(step, node);
  op.lifecycle = UsesLifecycleApi(*seen.talos);
  op.boot_id_before = seen.boot_id;
  op.started = in.now;
  op.deadline = in.now + in.profile.policy.node_timeout;
  // Installed ahead in this boot: the window begins at the cordon and drain.
  const StagedInstall* staged = PendingInstall(in.memory, node, seen.boot_id);
  if (op.lifecycle && staged != nullptr && staged->image == op.image) {
    op.phase = OperationPhase::kInstalled;
  }
  const std::string what =
      op.phase == OperationPhase::kInstalled
          ? fmt::format("rebooting {} ({}/{}) into its pending Talos {}", node, progress.done + 1,
                        progress.total, step.to.ToString())
      : step.from == step.to
          ? fmt::format("reinstalling {} ({}/{}) on Talos {} with schematic {}", node,
                        progress.done + 1, progress.total, step.to.ToString(), op.schematic)
          : fmt::format("upgrading {} ({}/{}) to Talos {}", node, progress.done + 1, progress.total,
                        step.to.ToString());
  RolloutDecision d = Decision(ActionKind::kStartNode, ClusterPhase::kUpgradingTalos, what, progress);
  d.node = node;
  d.image = op.image;
  d.operation = std::move(op);
  return d;
}

// The decision of a start check that holds the rollout now, if it does (start_checks.h).
std::optional<RolloutDecision> HeldBy(StartCheck check, const RolloutInput& in,
                                      const PlanStep& step, Progress progress) {
  const RolloutMemory& mem = in.memory;
  // Before the first node or a Kubernetes step a cluster problem blocks; between nodes it is
  // part of the rollout.
  const ClusterPhase health_phase =
      step.type == StepType::kKubernetes || (progress.done == 0 && mem.in_flight.empty())
          ? ClusterPhase::kBlocked
          : ClusterPhase::kUpgradingTalos;
  std::string problem;
  switch (check) {
    case StartCheck::kPaused:
      if (!in.profile.policy.paused) return std::nullopt;
      return Decision(ActionKind::kNone, ClusterPhase::kPaused, "paused by policy", progress);
    case StartCheck::kPromotion:
      if (in.promotion.ready || !mem.in_flight.empty()) return std::nullopt;
      return Wait(ClusterPhase::kWaitingForPromotion, in.promotion.message,
                  in.promotion.ready_at.value_or(in.now + in.poll_interval), progress);
    case StartCheck::kWindow: {
      if (in.window.open) return std::nullopt;
      if (!mem.in_flight.empty()) return WaitForInFlight(in, progress);
      // Say when: "waiting" alone leaves people guessing whether anything will happen.
      const std::string when =
          in.window.next_open ? fmt::format(" (opens {})", FormatTimestamp(*in.window.next_open))
                              : "";
      RolloutDecision d =
          Decision(ActionKind::kNone, ClusterPhase::kWaitingForWindow,
                   "waiting for the next maintenance window" + when + PendingNote(mem), progress);
      d.wait_until = in.window.next_open;
      // Pending nodes are looked at meanwhile: one that reboots by itself is activated early.
      if (!mem.staged.empty()) {
        const TimePoint look = in.now + in.poll_interval * kHeardPollFactor;
        d.wait_until = d.wait_until ? std::min(*d.wait_until, look) : look;
      }
      return d;
    }
    case StartCheck::kNodesReady:
      problem = NodesNotReadyProblem(in.profile, in.observed, mem);
      break;
    case StartCheck::kEtcdQuorum:
      problem = EtcdQuorumProblem(in.profile, in.observed, mem);
      break;
    case StartCheck::kHealthChecks:
      if (in.extra_gates.passed) return std::nullopt;
      return WaitForGates(in, progress);
  }
  if (problem.empty()) return std::nullopt;
  return Wait(health_phase, "waiting: " + problem, in.now + in.poll_interval, progress);
}

// The step's nodes that pre-pull its installer: those running Talos 1.13 or later. Below it,
// each node's Upgrade call pulls the image itself, so there is nothing to pre-pull and no step
// to report (a node not observed is left to its own Upgrade as well).
std::vector<std::string> NodesThatPrePull(const RolloutInput& in, const PlanStep& step) {
  std::vector<std::string> nodes;
  for (const std::string& name : step.Nodes()) {
    const NodeObservation* seen = in.observed.FindNode(name);
    if (seen == nullptr || !seen->talos || !UsesLifecycleApi(*seen->talos)) continue;
    // Installed ahead: its install pulled it already.
    const StagedInstall* staged = PendingInstall(in.memory, name, seen->boot_id);
    if (staged == nullptr || staged->image != InstallerFor(step, name)) nodes.push_back(name);
  }
  return nodes;
}

// The next installer of the step to pre-pull, on the nodes that get it: the step's own first,
// then each node's own; nullopt once every one is pulled.
std::optional<RolloutDecision> NextPrePull(const RolloutInput& in, const PlanStep& step,
                                           Progress progress) {
  std::vector<std::pair<std::string, std::vector<std::string>>> images{{step.installer_image, {}}};
  for (const std::string& node : NodesThatPrePull(in, step)) {
    const std::string& image = InstallerFor(step, node);
    auto it = std::find_if(images.begin(), images.end(),
                           [&](const auto& entry) { return entry.first == image; });
    if (it == images.end()) it = images.emplace(images.end(), image, std::vector<std::string>{});
    it->second.push_back(node);
  }
  for (auto& [image, nodes] : images) {
    const bool node_image = image != step.installer_image;
    if (nodes.empty() || Prepulled(in.memory, image, node_image)) continue;
    RolloutDecision d = Decision(ActionKind::kPrePullImage, ClusterPhase::kUpgradingTalos,
                                 "pre-pulling " + image, progress);
    d.image = image;
    d.node_image = node_image;
    d.nodes = std::move(nodes);
    return d;
  }
  return std::nullopt;
}

// What starts next once every start check passed.
RolloutDecision StartNext(const RolloutInput& in, const PlanStep& step, const std::string& next,
                          Progress progress) {
  const RolloutMemory& mem = in.memory;
  if (step.type == StepType::kKubernetes) {
    RolloutDecision d = Decision(
        ActionKind::kStartKubernetesUpgrade, ClusterPhase::kUpgradingKubernetes,
        fmt::format("upgrading Kubernetes {} → {}", step.from.ToString(), step.to.ToString()),
        progress);
    d.nodes = step.Nodes();
    return d;
  }
  if (std::optional<RolloutDecision> pull = NextPrePull(in, step, progress)) return *pull;
  if (in.profile.policy.etcd_snapshot && IsControlPlane(in.profile, next) &&
      mem.etcd_snapshot_image != step.installer_image) {
    RolloutDecision d =
        Decision(ActionKind::kSnapshotEtcd, ClusterPhase::kUpgradingTalos,
                 "saving an etcd snapshot before the first control plane", progress);
    d.image = step.installer_image;
    return d;
  }
  return StartNode(in, step, next, progress);
}

// Nothing in flight needs a call: run the start checks, then start what is next.
RolloutDecision StartOrWait(const RolloutInput& in, const PlanStep& step, Progress progress) {
  if (step.type == StepType::kKubernetes && in.kubernetes_step_started) {
    return StartNext(in, step, "", progress);
  }
  std::optional<std::string> next;
  bool room_checked = false;
  // Installing ahead needs no window; every other start check holds it as it holds a node.
  const std::optional<RolloutDecision> ahead = NextInstallAhead(in, step, progress);
  for (StartCheck check : StartChecks(in.profile)) {
    if (ahead && check == StartCheck::kWindow) continue;
    // While nothing more may start beside the work in flight, the cluster's health does not
    // matter yet (an upgraded control plane rebooting is not an etcd member, and must not
    // read as a quorum problem).
    if (ChecksClusterHealth(check) && !room_checked) {
      room_checked = true;
      if (step.type == StepType::kTalos) next = NextStartableNode(in.profile, step, in.memory);
      const bool room =
          step.type == StepType::kTalos ? next.has_value() : in.memory.in_flight.empty();
      if (!room) return WaitForInFlight(in, progress);
    }
    if (std::optional<RolloutDecision> d = HeldBy(check, in, step, progress)) return *d;
  }
  if (ahead) return *ahead;
  return StartNext(in, step, next.value_or(""), progress);
}

// A node started before the desired Talos went back below its target (a reverted bump) is seen
// through, not abandoned: the installer armed its new slot, a drain cordoned it, a reboot may be
// under way. It is the one node that moves against the new commit, so the message says so.
RolloutDecision NoteRevert(const RolloutInput& in, RolloutDecision d) {
  std::string nodes;
  for (const OperationInFlight& op : in.memory.in_flight) {
    if (in.profile.talos_version < op.target) nodes += (nodes.empty() ? "" : ", ") + op.node;
  }
  if (nodes.empty()) return d;
  d.message += fmt::format(
      "; finishing the upgrade of {} begun before the desired Talos went back to {}; no other "
      "node is started, and none is downgraded",
      nodes, in.profile.talos_version.ToString());
  return d;
}

}  // namespace

RolloutDecision DecideNextAction(const RolloutInput& in) {
  const ClusterPlan& plan = in.plan;
  const RolloutMemory& mem = in.memory;
  const Progress progress = TalosProgress(in.profile, plan, in.observed);
  if (HaltedByFailure(mem, in.profile)) {
    return Decision(ActionKind::kNone, ClusterPhase::kUpgradeFailed,
                    "halted: " + mem.failure->message, progress);
  }
  // A node in flight is always seen through, even when paused or outside a window.
  for (const OperationInFlight& op : mem.in_flight) {
    if (std::optional<RolloutDecision> d = AdvanceOperation(in, op, progress)) {
      return NoteRevert(in, *std::move(d));
    }
  }
  if (std::optional<RolloutDecision> d = SettleStagedInstalls(in, progress)) return *d;
  if (!mem.in_flight.empty() && plan.status == PlanStatus::kBlocked) {
    return NoteRevert(in, WaitForInFlight(in, progress));
  }
  if (plan.status == PlanStatus::kBlocked) {
    return Decision(ActionKind::kNone, ClusterPhase::kBlocked, plan.message, progress);
  }
  if (plan.status == PlanStatus::kUpToDate && mem.in_flight.empty()) {
    return Decision(ActionKind::kNone, ClusterPhase::kReady, plan.message, progress);
  }
  if (mem.settle_until && in.now < *mem.settle_until) {
    return Wait(ClusterPhase::kUpgradingTalos, "settling", *mem.settle_until, progress);
  }
  if (plan.steps.empty()) return WaitForInFlight(in, progress);
  return StartOrWait(in, plan.steps.front(), progress);
}

bool DecisionReadsEtcd(const ClusterPlan& plan, const RolloutMemory& memory) {
  return plan.status != PlanStatus::kUpToDate || !memory.in_flight.empty() ||
         !memory.staged.empty();
}

}  // namespace tr::core
