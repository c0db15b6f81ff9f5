#include "core/rollout_record.h"

#include <algorithm>
#include <string_view>

#include "core/rollout_checks.h"

namespace tr::core {
namespace {

std::string_view TagOf(std::string_view image) {
  const size_t colon = image.rfind(':');
  return colon == std::string_view::npos ? "" : image.substr(colon + 1);
}

// The pull of `image` remembered; nodes' own installers pulled for another Talos tag are
// forgotten, so that the list holds one step's at most.
void RememberPull(RolloutMemory& memory, const std::string& image, bool node_image) {
  std::erase_if(memory.prepulled_node_images,
                [&](const std::string& old) { return TagOf(old) != TagOf(image); });
  if (!node_image) {
    memory.prepulled_image = image;
  } else if (!Prepulled(memory, image, true)) {
    memory.prepulled_node_images.push_back(image);
  }
}

void ForgetStaged(RolloutMemory& memory, const std::string& node) {
  std::erase_if(memory.staged, [&](const StagedInstall& s) { return s.node == node; });
}

}  // namespace

RolloutMemory RecordAction(const RolloutDecision& d, RolloutMemory memory, const Policy& policy,
                           TimePoint now, const std::string& actor_id) {
  auto op = std::find_if(memory.in_flight.begin(), memory.in_flight.end(),
                         [&](const OperationInFlight& o) { return o.node == d.node; });
  const bool found = op != memory.in_flight.end();
  auto advance = [&](OperationPhase phase) {
    if (!found) return;
    op->phase = phase;
    if (!actor_id.empty()) op->actor_id = actor_id;
    if (op->boot_id_before.empty()) op->boot_id_before = d.boot_id;
  };
  switch (d.kind) {
    case ActionKind::kPrePullImage:
      RememberPull(memory, d.image, d.node_image);
      break;
    case ActionKind::kSnapshotEtcd:
      memory.etcd_snapshot_image = d.image;
      break;
    case ActionKind::kStartNode:
      if (d.operation && !found) memory.in_flight.push_back(*d.operation);
      ForgetStaged(memory, d.node);  // the operation carries it now
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
    case ActionKind::kInstallAhead:
    case ActionKind::kRecallStaged:
      if (d.staged) {
        ForgetStaged(memory, d.node);
        memory.staged.push_back(*d.staged);
      }
      break;
    case ActionKind::kWithdrawStaged:
      for (StagedInstall& s : memory.staged) {
        if (s.node == d.node) s.withdrawn = true;
      }
      break;
    case ActionKind::kUnstageNode:
    case ActionKind::kActivatedEarly:
      ForgetStaged(memory, d.node);
      break;
    case ActionKind::kNone:
    case ActionKind::kStartKubernetesUpgrade:
      break;
  }
  return memory;
}

RolloutMemory AfterCallNeverReceived(RolloutMemory memory, const std::string& node) {
  for (OperationInFlight& op : memory.in_flight) {
    if (op.node == node && op.phase == OperationPhase::kRecorded) op.boot_id_before.clear();
  }
  return memory;
}

RolloutMemory AfterInstallOnAnotherBoot(RolloutMemory memory, const NodeObservation& seen,
                                        const std::string& image) {
  for (OperationInFlight& op : memory.in_flight) {
    if (op.node != seen.name || op.phase != OperationPhase::kRecorded || !op.lifecycle ||
        op.image != image || op.boot_id_before.empty() || seen.boot_id.empty() ||
        seen.boot_id == op.boot_id_before) {
      continue;
    }
    OperationInFlight unguarded = op;
    unguarded.boot_id_before.clear();
    if (NodeUntouched(seen, unguarded)) op.boot_id_before.clear();
  }
  return memory;
}

bool Prepulled(const RolloutMemory& memory, const std::string& image, bool node_image) {
  if (!node_image) return memory.prepulled_image == image;
  const std::vector<std::string>& pulled = memory.prepulled_node_images;
  return std::find(pulled.begin(), pulled.end(), image) != pulled.end();
}

bool RecordMayWaitForNext(ActionKind kind) { return TraitsOf(kind).record_may_wait; }

bool HaltedByFailure(const RolloutMemory& memory, const ClusterProfile& profile) {
  return memory.failure && HaltedByFailure(memory, profile.talos_version,
                                           DesiredSchematicId(profile, memory.failure->node),
                                           profile.retry_token);
}

bool HaltedByFailure(const RolloutMemory& memory, const Version& target,
                     const std::string& schematic, const std::string& retry_token) {
  return memory.failure && memory.failure->talos_target == target &&
         memory.failure->schematic == schematic && memory.failure->retry == retry_token;
}

}  // namespace tr::core
