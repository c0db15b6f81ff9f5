#include "core/install_ahead.h"

#include <algorithm>

#include "core/planner.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

RolloutDecision NodeDecision(ActionKind kind, std::string node, std::string image,
                             std::string message, Progress progress) {
  RolloutDecision d;
  d.kind = kind;
  d.phase = ClusterPhase::kUpgradingTalos;
  d.node = std::move(node);
  d.image = std::move(image);
  d.message = std::move(message);
  d.progress = progress;
  return d;
}

// The installer the plan wants on `node`: its first Talos step's that moves it; "" when none.
std::string WantedInstaller(const ClusterPlan& plan, const std::string& node) {
  for (const PlanStep& step : plan.steps) {
    if (step.type != StepType::kTalos) continue;
    const std::vector<std::string> nodes = step.Nodes();
    if (std::find(nodes.begin(), nodes.end(), node) != nodes.end()) {
      return InstallerFor(step, node);
    }
  }
  return "";
}

// The node booted the staged install: its version and, when it names one, its schematic.
bool RunsStaged(const NodeObservation& seen, const StagedInstall& staged) {
  if (!seen.talos || *seen.talos != staged.target) return false;
  return staged.schematic.empty() || RunningSchematic(seen) == staged.schematic;
}

// RUNNING and Ready; a control plane is a healthy voting etcd member.
bool Healthy(const ClusterProfile& profile, const NodeObservation& seen) {
  if (!seen.ready || seen.stage != MachineStage::kRunning) return false;
  return !IsControlPlane(profile, seen.name) || (seen.etcd_member && seen.etcd_healthy);
}

// The node's installer at the version it runs, from the same repository as `staged`'s, when the
// node runs that repository's schematic (a factory repository names it; a profile without a
// schematic has one repository for every version); "" otherwise.
std::string RunningInstaller(const NodeObservation& seen, const StagedInstall& staged) {
  const size_t colon = staged.image.rfind(':');
  if (!seen.talos || colon == std::string::npos) return "";
  if (!staged.schematic.empty() && RunningSchematic(seen) != staged.schematic) return "";
  return staged.image.substr(0, colon + 1) + seen.talos->Tag();
}

std::optional<RolloutDecision> SettleOne(const RolloutInput& in, const StagedInstall& staged,
                                         Progress progress) {
  const NodeObservation* seen = in.observed.FindNode(staged.node);
  if (seen == nullptr || !seen->reachable || seen->boot_id.empty()) return std::nullopt;
  const std::string wanted = WantedInstaller(in.plan, staged.node);
  if (seen->boot_id != staged.boot_id) {
    if (RunsStaged(*seen, staged)) {
      if (!Healthy(in.profile, *seen)) {
        RolloutDecision d = NodeDecision(
            ActionKind::kNone, staged.node, "",
            fmt::format("{} rebooted outside the window into its pending Talos {}; waiting for it "
                        "to be healthy",
                        staged.node, staged.target.ToString()),
            progress);
        d.wait_until = in.now + in.poll_interval;
        return d;
      }
      return NodeDecision(
          ActionKind::kActivatedEarly, staged.node, staged.image,
          fmt::format("{} activated early: it rebooted outside the window into its pending Talos "
                      "{} and is healthy; counted as done, no other node rebooted",
                      staged.node, staged.target.ToString()),
          progress);
    }
    // Back on its old version: the install is gone (the fallback, or a reinstall by hand).
    if (wanted == staged.image && in.profile.policy.install == InstallTiming::kAhead) {
      RolloutDecision d = NodeDecision(
          ActionKind::kInstallAhead, staged.node, staged.image,
          fmt::format("{} came back on Talos {} after a reboot outside the window: its pending "
                      "install of {} was lost; installing it again",
                      staged.node, seen->talos ? seen->talos->ToString() : "?",
                      staged.target.ToString()),
          progress);
      StagedInstall again = staged;
      again.boot_id = seen->boot_id;
      again.installed = in.now;
      d.staged = std::move(again);
      return d;
    }
    return NodeDecision(ActionKind::kUnstageNode, staged.node, "",
                        fmt::format("{} lost its pending install of Talos {} in a reboot; "
                                    "nothing left to un-stage",
                                    staged.node, staged.target.ToString()),
                        progress);
  }
  // Still in the boot it was installed in. Another wanted installer is written over it by
  // NextInstallAhead; none at all (the desired version is the one the node runs, or the plan is
  // blocked by the very release installed) is un-staged, so that no reboot, ours or not, boots
  // it. A plan blocked for any other reason (a node down for its reboot, an unsupported
  // target while the release stands) keeps the install: it is wanted again once that passes.
  if (!wanted.empty()) return std::nullopt;
  const bool blocked = in.plan.status == PlanStatus::kBlocked;
  if (blocked && in.plan.broken_release != staged.target) return std::nullopt;
  const std::string running = RunningInstaller(*seen, staged);
  if (running.empty()) return std::nullopt;
  const std::string why = blocked ? in.plan.message : "the desired version is the one it runs";
  // Recorded first: from then on a restart un-stages again rather than reboot into it.
  if (!staged.withdrawn) {
    return NodeDecision(ActionKind::kWithdrawStaged, staged.node, staged.image,
                        fmt::format("{}'s pending Talos {} is no longer wanted ({}); un-staging it",
                                    staged.node, staged.target.ToString(), why),
                        progress);
  }
  return NodeDecision(ActionKind::kUnstageNode, staged.node, running,
                      fmt::format("un-staging {}: installing the Talos {} it runs over its "
                                  "pending Talos {}",
                                  staged.node, seen->talos->ToString(), staged.target.ToString()),
                      progress);
}

// The installer repository of `node` (its own schematic's, else the profile's) with `version`'s
// tag.
std::string InstallerAt(const ClusterProfile& profile, const std::string& node,
                        const Version& version) {
  for (const NodeSpec& spec : profile.nodes) {
    if (spec.name == node && !spec.talos_image.empty()) return spec.talos_image + ":" + version.Tag();
  }
  return profile.talos_image + ":" + version.Tag();
}

// A pending-install mark (pending_mark.h) on a node the status does not remember: an install in
// this boot is recorded again; a mark from an earlier boot is done with (the node booted it, or
// lost it).
std::optional<RolloutDecision> ReadBackMark(const RolloutInput& in, const NodeObservation& seen,
                                            Progress progress) {
  const PendingInstallMark& mark = *seen.pending_mark;
  const bool remembered = std::any_of(in.memory.staged.begin(), in.memory.staged.end(),
                                      [&](const StagedInstall& s) { return s.node == seen.name; });
  if (remembered || in.memory.InFlight(seen.name) || !seen.reachable || !seen.talos ||
      seen.boot_id.empty()) {
    return std::nullopt;
  }
  const StagedInstall staged{.node = seen.name,
                             .target = mark.target,
                             .image = InstallerAt(in.profile, seen.name, mark.target),
                             .schematic = mark.schematic,
                             .boot_id = mark.boot_id,
                             .installed = in.now};
  if (mark.boot_id == seen.boot_id && !RunsStaged(seen, staged)) {
    RolloutDecision d = NodeDecision(
        ActionKind::kRecallStaged, seen.name, staged.image,
        fmt::format("found {}'s pending install of Talos {} in its Kubernetes node's {} "
                    "annotation: the status had lost it",
                    seen.name, mark.target.ToString(), kPendingInstallAnnotation),
        progress);
    d.staged = staged;
    return d;
  }
  if (RunsStaged(seen, staged) && mark.boot_id != seen.boot_id) {
    if (!Healthy(in.profile, seen)) return std::nullopt;
    return NodeDecision(ActionKind::kActivatedEarly, seen.name, staged.image,
                        fmt::format("{} activated early: it rebooted into its pending Talos {} "
                                    "(known from its Kubernetes node's mark) and is healthy",
                                    seen.name, mark.target.ToString()),
                        progress);
  }
  return NodeDecision(ActionKind::kUnstageNode, seen.name, "",
                      fmt::format("{}'s pending-install mark of Talos {} is out of date; "
                                  "removing it",
                                  seen.name, mark.target.ToString()),
                      progress);
}

}  // namespace

std::optional<RolloutDecision> SettleStagedInstalls(const RolloutInput& in, Progress progress) {
  for (const NodeObservation& seen : in.observed.nodes) {
    if (!seen.pending_mark) continue;
    if (std::optional<RolloutDecision> d = ReadBackMark(in, seen, progress)) return d;
  }
  for (const StagedInstall& staged : in.memory.staged) {
    if (std::optional<RolloutDecision> d = SettleOne(in, staged, progress)) return d;
  }
  return std::nullopt;
}

std::optional<RolloutDecision> NextInstallAhead(const RolloutInput& in, const PlanStep& step,
                                                Progress progress) {
  if (in.profile.policy.install != InstallTiming::kAhead || step.type != StepType::kTalos ||
      !in.memory.in_flight.empty()) {
    return std::nullopt;
  }
  const std::vector<std::string> nodes = step.Nodes();
  int pending = 0;
  std::optional<RolloutDecision> next;
  for (const std::string& node : nodes) {
    const NodeObservation* seen = in.observed.FindNode(node);
    if (seen == nullptr || !seen->talos || !UsesLifecycleApi(*seen->talos)) continue;
    const std::string& image = InstallerFor(step, node);
    const StagedInstall* held = PendingInstall(in.memory, node, seen->boot_id);
    if (held != nullptr && held->image == image) {
      ++pending;
      continue;
    }
    if (next) continue;
    const std::string over =
        held != nullptr ? fmt::format(" over its pending Talos {}", held->target.ToString()) : "";
    next = NodeDecision(ActionKind::kInstallAhead, node, image,
                        fmt::format("installing Talos {} ahead on {}{}; no cordon, no drain, no "
                                    "reboot",
                                    step.to.ToString(), node, over),
                        progress);
    next->staged = StagedInstall{.node = node,
                                 .target = step.to,
                                 .image = image,
                                 .schematic = SchematicFor(step, node),
                                 .boot_id = seen->boot_id,
                                 .installed = in.now};
  }
  if (next) next->message += fmt::format(" ({} of {} nodes pending reboot)", pending, nodes.size());
  return next;
}

const StagedInstall* PendingInstall(const RolloutMemory& memory, std::string_view node,
                                    std::string_view boot_id) {
  for (const StagedInstall& staged : memory.staged) {
    if (staged.node == node && staged.boot_id == boot_id && !staged.withdrawn) return &staged;
  }
  return nullptr;
}

std::string PendingNote(const RolloutMemory& memory) {
  std::vector<std::string> nodes;
  for (const StagedInstall& staged : memory.staged) {
    if (!staged.withdrawn) nodes.push_back(staged.node);
  }
  if (nodes.empty()) return "";
  return fmt::format("; {} {} installed, pending reboot: {}", nodes.size(),
                     nodes.size() == 1 ? "node" : "nodes", fmt::join(nodes, ", "));
}

}  // namespace tr::core
