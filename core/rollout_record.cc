#include "core/rollout_record.h"

#include <algorithm>

namespace tr::core {

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

bool HaltedByFailure(const RolloutMemory& memory, const Version& target,
                     const std::string& schematic) {
  return memory.failure && memory.failure->talos_target == target &&
         memory.failure->schematic == schematic;
}

}  // namespace tr::core
