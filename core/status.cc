#include "core/status.h"

#include <algorithm>

#include "core/duration.h"
#include "core/rollout_checks.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

std::string OptionalVersion(const std::optional<Version>& v) { return v ? v->ToString() : ""; }

// The aggregates below are computed from the node rows the record shows, so a record never
// contradicts itself: a node that does not answer counts with what it last ran, as its row says.

// The lowest Talos (or kubelet) version of the rows; "" when a row has none.
std::string LowestRowVersion(const std::vector<NodeStatus>& rows, bool talos) {
  std::optional<Version> low;
  for (const NodeStatus& row : rows) {
    const std::string& text = talos ? row.talos : row.kubelet;
    absl::StatusOr<Version> v = talos ? ParseTalosVersion(text) : ParseKubernetesVersion(text);
    if (!v.ok()) return "";
    if (!low || *v < *low) low = *v;
  }
  return OptionalVersion(low);
}

std::optional<std::string> RowSchematic(const NodeStatus& row) {
  if (row.schematic.empty()) return std::nullopt;
  return row.schematic;
}

// The schematic the rows still to move run, else the profile's; "" when none could be read. A
// node with a schematic of its own has moved once it runs that one.
std::string RowsSchematic(const ClusterProfile& profile, const std::vector<NodeStatus>& rows) {
  std::string current;
  for (const NodeStatus& row : rows) {
    const std::optional<std::string> runs = RowSchematic(row);
    if (!runs) continue;
    if (*runs != DesiredSchematicId(profile, row.name)) return *runs;
    current = profile.talos_schematic_id;
  }
  return current;
}

// The rows that count as moved (CountsAsMoved: the rule the rollout's own progress uses).
Progress RowsProgress(const ClusterProfile& profile, const ClusterPlan& plan,
                      const std::vector<NodeStatus>& rows) {
  const Version target = TalosStepTarget(profile, plan);
  Progress p{0, static_cast<int>(rows.size())};
  for (const NodeStatus& row : rows) {
    absl::StatusOr<Version> talos = ParseTalosVersion(row.talos);
    const std::optional<Version> seen = talos.ok() ? std::optional(*talos) : std::nullopt;
    if (CountsAsMoved(profile, row.name, target, seen, RowSchematic(row))) ++p.done;
  }
  return p;
}

bool WasActive(const ClusterStatus* previous, ComponentStatus ClusterStatus::*component) {
  if (previous == nullptr) return false;
  const ComponentState s = (previous->*component).state;
  return s == ComponentState::kInProgress || s == ComponentState::kCompleted;
}

// One component's state from the phase that names its own upgrade. `rows` are the record's
// node rows when they come from this observation (null otherwise).
ComponentStatus Component(const StatusInput& in, bool talos, ClusterPhase upgrading,
                          const std::vector<NodeStatus>* rows) {
  ComponentStatus c;
  const ClusterPlan* plan = in.plan;
  if (plan) c.target = (talos ? plan->talos_target : plan->kubernetes_target).ToString();
  if (rows) {
    c.current = LowestRowVersion(*rows, talos);
  } else if (plan) {
    c.current = OptionalVersion(talos ? plan->talos_current : plan->kubernetes_current);
  }
  if (talos && in.profile && in.profile->talos_factory) {
    c.schematic_target = in.profile->talos_schematic_id;
    if (rows) c.schematic_current = RowsSchematic(*in.profile, *rows);
  }
  if (in.catalog) {
    c.available =
        OptionalVersion(talos ? in.catalog->NewestTalos() : in.catalog->NewestKubernetes());
  }
  const RolloutDecision* d = in.decision;
  const ClusterPhase phase = d ? d->phase : ClusterPhase::kBlocked;
  const bool behind = c.current != c.target || c.schematic_current != c.schematic_target;
  if (talos && rows) {  // without a plan (blocked before one), towards the desired version
    c.progress = RowsProgress(*in.profile, plan ? *plan : ClusterPlan{}, *rows).ToString();
  } else if (talos && d && d->progress.total > 0) {  // "0/0" would count no rows: say nothing
    c.progress = d->progress.ToString();
  }
  if (phase == upgrading) {
    c.state = ComponentState::kInProgress;
    c.message = d->message;
  } else if (phase == ClusterPhase::kUpgradeFailed && talos) {
    c.state = ComponentState::kFailed;
    c.message = d->message;
  } else if (phase == ClusterPhase::kBlocked && behind) {
    c.state = ComponentState::kBlocked;
    c.message = d ? d->message : "";
  } else if (!behind &&
             WasActive(in.previous, talos ? &ClusterStatus::talos : &ClusterStatus::kubernetes)) {
    c.state = ComponentState::kCompleted;
    c.message = c.schematic_target.empty() ? fmt::format("every node runs {}", c.target)
                                           : fmt::format("every node runs {} with schematic {}",
                                                         c.target, c.schematic_target);
  } else {
    c.state = ComponentState::kIdle;
    if (behind && d) c.message = d->message;
  }
  return c;
}

std::string ReasonFor(ComponentState s) {
  switch (s) {
    case ComponentState::kIdle:
      return "Idle";
    case ComponentState::kInProgress:
      return "InProgress";
    case ComponentState::kCompleted:
      return "Succeeded";
    case ComponentState::kFailed:
      return "Failed";
    case ComponentState::kBlocked:
      return "Blocked";
  }
  return "Unknown";
}

Condition MakeCondition(const StatusInput& in, std::string type, bool status, std::string reason,
                        std::string message) {
  Condition c{std::move(type), status, std::move(reason), std::move(message), in.now};
  if (in.previous) {
    for (const Condition& old : in.previous->conditions) {
      if (old.type == c.type && old.status == c.status) c.last_transition = old.last_transition;
    }
  }
  return c;
}

const NodeStatus* PreviousNode(const ClusterStatus* previous, const std::string& name) {
  if (!previous) return nullptr;
  for (const NodeStatus& n : previous->nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

// A node that left the in-flight list on its target finished an upgrade now.
void RecordFinishedUpgrades(const StatusInput& in, NodeStatus& node, const NodeObservation& seen) {
  if (!in.previous) return;
  for (const OperationInFlight& op : in.previous->rollout.in_flight) {
    const bool still = in.memory.InFlight(op.node);
    if (op.node != node.name || still || !seen.talos || *seen.talos != op.target) continue;
    const auto took = std::chrono::duration_cast<std::chrono::seconds>(in.now - op.started);
    node.last_upgrade_duration = took;
    node.last_operation = fmt::format("upgraded to Talos {} in {} ({})", op.target.ToString(),
                                      FormatDuration(took), FormatTimestamp(in.now));
  }
  // One that left the pending list by booting its install outside a window (kActivatedEarly).
  for (const StagedInstall& staged : in.previous->rollout.staged) {
    const bool still = std::any_of(in.memory.staged.begin(), in.memory.staged.end(),
                                   [&](const StagedInstall& s) { return s.node == staged.node; });
    if (staged.node != node.name || still || !seen.talos || *seen.talos != staged.target ||
        seen.boot_id == staged.boot_id) {
      continue;
    }
    node.last_operation = fmt::format(
        "activated early on Talos {}: its install of {} booted outside the window ({})",
        staged.target.ToString(), FormatTimestamp(staged.installed), FormatTimestamp(in.now));
  }
}

// The boot the node runs, and since when it has been seen: a new boot id starts the clock, a
// node that does not say keeps what was recorded.
void RecordBoot(NodeStatus& node, const NodeStatus* old, const NodeObservation& seen,
                TimePoint now) {
  if (seen.boot_id.empty()) {
    if (old) {
      node.boot_id = old->boot_id;
      node.boot_seen = old->boot_seen;
    }
    return;
  }
  node.boot_id = seen.boot_id;
  node.boot_seen = old && old->boot_id == seen.boot_id && old->boot_seen ? old->boot_seen : now;
}

std::vector<NodeStatus> Nodes(const StatusInput& in) {
  std::vector<NodeStatus> nodes;
  if (!in.profile || !in.observed) return in.previous ? in.previous->nodes : nodes;
  for (const NodeSpec& spec : in.profile->nodes) {
    NodeStatus node;
    node.name = spec.name;
    node.role = NodeRoleName(spec.role);
    const NodeStatus* old = PreviousNode(in.previous, spec.name);
    if (old) {
      node.last_operation = old->last_operation;
      node.last_upgrade_duration = old->last_upgrade_duration;
    }
    if (const NodeObservation* seen = in.observed->FindNode(spec.name)) {
      node.talos = OptionalVersion(seen->talos);
      node.kubelet = OptionalVersion(seen->kubelet);
      if (in.profile->talos_factory) {  // so other files keep their shape
        node.schematic = LastSeenSchematic(*seen).value_or(old ? old->schematic : "");
      }
      RecordBoot(node, old, *seen, in.now);
      node.ready = seen->reachable && seen->ready;
      node.reachable = seen->reachable;
      if (!seen->reachable && old) {
        node.last_seen = old->reachable ? std::optional(in.previous->updated) : old->last_seen;
      }
      RecordFinishedUpgrades(in, node, *seen);
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

// The profile's labels; while it is invalid, the last recorded ones, so that a broken profile
// does not change who is notified of what happens to the cluster.
std::map<std::string, std::string> Labels(const StatusInput& in) {
  const bool invalid = in.invalid != nullptr && !in.invalid->empty();
  if (in.profile != nullptr && !invalid) return in.profile->labels;
  if (in.previous != nullptr) return in.previous->labels;
  return {};
}

void AppendHistory(const StatusInput& in, ClusterStatus& status) {
  if (in.previous) status.history = in.previous->history;
  if (!in.previous || in.previous->phase != status.phase) {
    status.history.push_back(
        {in.now, fmt::format("{}: {}", ClusterPhaseName(status.phase), status.message)});
  }
  for (const std::string& event : in.events) status.history.push_back({in.now, event});
  if (status.history.size() > kMaxHistory) {
    status.history.erase(status.history.begin(),
                         status.history.end() - static_cast<std::ptrdiff_t>(kMaxHistory));
  }
}

}  // namespace

ObservedCluster WithLastKnownVersions(ObservedCluster observed, const ClusterStatus* previous) {
  if (previous == nullptr) return observed;
  for (NodeObservation& node : observed.nodes) {
    const NodeStatus* old = PreviousNode(previous, node.name);
    if (old == nullptr) continue;
    // A schematic is read apart from the versions: it may be missing from a node that answers.
    if ((!node.reachable || !node.extensions_observed) && !node.schematic &&
        !old->schematic.empty()) {
      node.schematic = old->schematic;
    }
    if (node.reachable) continue;
    if (!node.talos && !old->talos.empty()) {
      if (auto v = ParseTalosVersion(old->talos); v.ok()) node.talos = *v;
    }
    if (!node.kubelet && !old->kubelet.empty()) {
      if (auto v = ParseKubernetesVersion(old->kubelet); v.ok()) node.kubelet = *v;
    }
  }
  return observed;
}

ClusterStatus BuildClusterStatus(const StatusInput& in) {
  ClusterStatus s;
  s.cluster = in.cluster;
  s.labels = Labels(in);
  s.updated = in.now;
  s.rollout = in.memory;
  s.gates = in.gates;
  s.proposal = in.proposal;
  s.desired_commit_attempted = in.desired_commit;
  s.desired_commit_applied = in.previous ? in.previous->desired_commit_applied : "";
  s.nodes = Nodes(in);
  if (in.invalid && !in.invalid->empty()) {
    s.phase = ClusterPhase::kBlocked;
    s.message = "invalid profile: " + in.invalid->front().ToString();
    if (in.previous) s.rollout = in.previous->rollout;
    s.talos = in.previous ? in.previous->talos : ComponentStatus{};
    s.kubernetes = in.previous ? in.previous->kubernetes : ComponentStatus{};
    s.talos.state = s.kubernetes.state = ComponentState::kBlocked;
    s.talos.message = s.kubernetes.message = s.message;
  } else {
    s.phase = in.decision ? in.decision->phase : ClusterPhase::kBlocked;
    s.message = in.decision ? in.decision->message : "";
    const std::vector<NodeStatus>* rows = in.profile && in.observed ? &s.nodes : nullptr;
    s.talos = Component(in, true, ClusterPhase::kUpgradingTalos, rows);
    s.kubernetes = Component(in, false, ClusterPhase::kUpgradingKubernetes, rows);
  }
  if (s.phase == ClusterPhase::kReady) s.desired_commit_applied = in.desired_commit;
  s.conditions = {
      MakeCondition(in, "TalosUpgrade", s.talos.state == ComponentState::kInProgress,
                    ReasonFor(s.talos.state), s.talos.message),
      MakeCondition(in, "KubernetesUpgrade", s.kubernetes.state == ComponentState::kInProgress,
                    ReasonFor(s.kubernetes.state), s.kubernetes.message),
      MakeCondition(in, "Ready", s.phase == ClusterPhase::kReady, ClusterPhaseName(s.phase),
                    s.message)};
  AppendHistory(in, s);
  return s;
}

namespace {

// What a restarted reconciler resumes from, but the commit the status was derived from.
bool SameResumeStateButCommit(const ClusterStatus& a, const ClusterStatus& b) {
  return a.cluster == b.cluster && a.labels == b.labels && a.phase == b.phase &&
         a.rollout == b.rollout && a.gates == b.gates && a.history == b.history;
}

}  // namespace

bool OnlyReportDiffers(const ClusterStatus& recorded, const ClusterStatus& next) {
  return SameResumeStateButCommit(recorded, next) &&
         recorded.desired_commit_attempted == next.desired_commit_attempted &&
         recorded.desired_commit_applied == next.desired_commit_applied;
}

bool OnlyCommitOfReadyClusterDiffers(const ClusterStatus& recorded, const ClusterStatus& next) {
  return recorded.phase == ClusterPhase::kReady && SameResumeStateButCommit(recorded, next);
}

}  // namespace tr::core
