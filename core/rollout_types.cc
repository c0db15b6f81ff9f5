#include "core/rollout_types.h"

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

std::string Progress::ToString() const { return fmt::format("{}/{}", done, total); }

}  // namespace tr::core
