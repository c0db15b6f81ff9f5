// Names of the rollout vocabulary, as they appear in status, logs and JSON, and how a
// decision's action changes the rollout memory.
#include <algorithm>

#include "core/rollout.h"
#include "fmt/format.h"

namespace tr::core {

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

const char* ActionKindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kNone:
      return "none";
    case ActionKind::kPrePullImage:
      return "pre-pull-image";
    case ActionKind::kSnapshotEtcd:
      return "snapshot-etcd";
    case ActionKind::kStartNode:
      return "start-node";
    case ActionKind::kCallUpgrade:
      return "call-upgrade";
    case ActionKind::kInstallImage:
      return "install-image";
    case ActionKind::kDrainNode:
      return "drain-node";
    case ActionKind::kRebootNode:
      return "reboot-node";
    case ActionKind::kCompleteNode:
      return "complete-node";
    case ActionKind::kRollbackNode:
      return "rollback-node";
    case ActionKind::kFailNode:
      return "fail-node";
    case ActionKind::kStartKubernetesUpgrade:
      return "start-kubernetes-upgrade";
  }
  return "unknown";
}

RolloutMemory RecordAction(const RolloutDecision& d, RolloutMemory memory, const Policy& policy,
                           TimePoint now, const std::string& actor_id) {
  auto op = std::find_if(memory.in_flight.begin(), memory.in_flight.end(),
                         [&](const OperationInFlight& o) { return o.node == d.node; });
  const bool found = op != memory.in_flight.end();
  auto advance = [&](OperationPhase phase) {
    if (!found) return;
    op->phase = phase;
    if (!actor_id.empty()) op->actor_id = actor_id;
  };
  switch (d.kind) {
    case ActionKind::kPrePullImage:
      memory.prepulled_image = d.image;
      break;
    case ActionKind::kSnapshotEtcd:
      memory.etcd_snapshot_image = d.image;
      break;
    case ActionKind::kStartNode:
      if (d.operation && !found) memory.in_flight.push_back(*d.operation);
      break;
    case ActionKind::kCallUpgrade:
      advance(OperationPhase::kUpgradeCalled);
      break;
    case ActionKind::kInstallImage:
      advance(OperationPhase::kInstalled);
      break;
    case ActionKind::kDrainNode:
      advance(OperationPhase::kDrained);
      break;
    case ActionKind::kRebootNode:
      advance(OperationPhase::kRebootCalled);
      break;
    case ActionKind::kCompleteNode:
      if (found) memory.in_flight.erase(op);
      memory.settle_until = now + policy.settle;
      break;
    case ActionKind::kFailNode:
    case ActionKind::kRollbackNode:
      memory.failure = d.failure;
      memory.in_flight.clear();
      break;
    case ActionKind::kNone:
    case ActionKind::kStartKubernetesUpgrade:
      break;
  }
  return memory;
}

std::string Progress::ToString() const { return fmt::format("{}/{}", done, total); }

}  // namespace tr::core
