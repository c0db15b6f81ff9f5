#include "core/rollout_types.h"

#include <algorithm>
#include <array>
#include <cstddef>

#include "fmt/format.h"

namespace tr::core {

// Names of the rollout vocabulary, as they appear in status, logs and JSON.

const char* OperationPhaseName(OperationPhase phase) {
  switch (phase) {
    case OperationPhase::kRecorded:
      return "recorded";
    case OperationPhase::kUpgradeCalled:
      return "upgrade-called";
    case OperationPhase::kInstalled:
      return "installed";
    case OperationPhase::kDrained:
      return "drained";
    case OperationPhase::kRebootCalled:
      return "reboot-called";
  }
  return "unknown";
}

const char* ClusterPhaseName(ClusterPhase phase) {
  switch (phase) {
    case ClusterPhase::kReady:
      return "Ready";
    case ClusterPhase::kUpgradingTalos:
      return "UpgradingTalos";
    case ClusterPhase::kUpgradingKubernetes:
      return "UpgradingKubernetes";
    case ClusterPhase::kUpgradeFailed:
      return "UpgradeFailed";
    case ClusterPhase::kBlocked:
      return "Blocked";
    case ClusterPhase::kPaused:
      return "Paused";
    case ClusterPhase::kWaitingForWindow:
      return "WaitingForWindow";
    case ClusterPhase::kWaitingForGate:
      return "WaitingForGate";
    case ClusterPhase::kWaitingForPromotion:
      return "WaitingForPromotion";
  }
  return "Unknown";
}

namespace {

// One row per ActionKind, in its order.
ActionTraits Traits(ActionKind kind) {
  ActionTraits t;
  switch (kind) {
    case ActionKind::kNone:
      t.name = "none";
      break;
    case ActionKind::kPrePullImage:
      t = {.name = "pre-pull-image",
           .acts = true,
           .gated = true,
           .held_by_running_step = true,
           .keeps_observation = true,
           .keeps_etcd = true,
           .runs_in_background = true,
           .record_may_wait = true};
      break;
    case ActionKind::kSnapshotEtcd:
      t = {.name = "snapshot-etcd",
           .acts = true,
           .gated = true,
           .held_by_running_step = true,
           .keeps_observation = true,
           .keeps_etcd = true,
           .notable = true,
           .runs_in_background = true,
           .record_may_wait = true};
      break;
    case ActionKind::kStartNode:
      t = {.name = "start-node",
           .acts = true,
           .only_records = true,
           .gated = true,
           .held_by_running_step = true,
           .keeps_observation = true,
           .keeps_etcd = true,
           .notable = true,
           .starts_node = true};
      break;
    case ActionKind::kCallUpgrade:
      t = {.name = "call-upgrade", .acts = true, .held_by_running_step = true};
      break;
    case ActionKind::kInstallImage:
      t = {.name = "install-image", .acts = true, .held_by_running_step = true,
           .runs_in_background = true};
      break;
    case ActionKind::kDrainNode:
      t = {.name = "drain-node", .acts = true, .held_by_running_step = true,
           .runs_in_background = true};
      break;
    case ActionKind::kRebootNode:
      t = {.name = "reboot-node", .acts = true, .held_by_running_step = true};
      break;
    case ActionKind::kCompleteNode:
      // Uncordons the node (Kubernetes), which leaves etcd as it was.
      t = {.name = "complete-node",
           .acts = true,
           .held_by_running_step = true,
           .keeps_etcd = true,
           .notable = true,
           .record_may_wait = true,
           .ends_node = "completed",
           .completes_node = true};
      break;
    case ActionKind::kRollbackNode:
      t = {.name = "rollback-node", .acts = true, .held_by_running_step = true, .notable = true,
           .ends_node = "rolled_back"};
      break;
    case ActionKind::kFailNode:
      t = {.name = "fail-node",
           .acts = true,
           .only_records = true,
           .keeps_etcd = true,
           .notable = true,
           .ends_node = "failed"};
      break;
    case ActionKind::kInstallAhead:
      t = {.name = "install-ahead", .acts = true, .gated = true, .held_by_running_step = true,
           .notable = true, .runs_in_background = true};
      break;
    case ActionKind::kUnstageNode:
      t = {.name = "unstage-node", .acts = true, .held_by_running_step = true, .notable = true,
           .runs_in_background = true};
      break;
    case ActionKind::kActivatedEarly:
      t = {.name = "activated-early", .acts = true, .held_by_running_step = true, .notable = true,
           .ends_node = "activated_early"};
      break;
    case ActionKind::kRecallStaged:
      t = {.name = "recall-staged",
           .acts = true,
           .only_records = true,
           .keeps_observation = true,
           .keeps_etcd = true,
           .notable = true};
      break;
    case ActionKind::kWithdrawStaged:
      t = {.name = "withdraw-staged",
           .acts = true,
           .only_records = true,
           .keeps_observation = true,
           .keeps_etcd = true,
           .notable = true};
      break;
    case ActionKind::kStartKubernetesUpgrade:
      t = {.name = "start-kubernetes-upgrade", .gated = true, .handed_over = true};
      break;
  }
  return t;
}

}  // namespace

const ActionTraits& TraitsOf(ActionKind kind) {
  constexpr size_t kKinds = static_cast<size_t>(ActionKind::kStartKubernetesUpgrade) + 1;
  static const std::array<ActionTraits, kKinds> kTable = [] {
    std::array<ActionTraits, kKinds> table;
    for (size_t i = 0; i < kKinds; ++i) table[i] = Traits(static_cast<ActionKind>(i));
    return table;
  }();
  static const ActionTraits kUnknown{.name = "unknown"};
  const auto index = static_cast<size_t>(kind);
  return index < kKinds ? kTable[index] : kUnknown;
}

const char* ActionKindName(ActionKind kind) { return TraitsOf(kind).name; }

std::string Progress::ToString() const { return fmt::format("{}/{}", done, total); }

bool RolloutMemory::InFlight(std::string_view node) const {
  return std::any_of(in_flight.begin(), in_flight.end(),
                     [&](const OperationInFlight& op) { return op.node == node; });
}

}  // namespace tr::core
