#include "core/plan_types.h"

namespace tr::core {

const std::string& InstallerFor(const PlanStep& step, const std::string& node) {
  auto own = step.own_installers.find(node);
  return own == step.own_installers.end() ? step.installer_image : own->second.image;
}

const std::string& SchematicFor(const PlanStep& step, const std::string& node) {
  auto own = step.own_installers.find(node);
  return own == step.own_installers.end() ? step.schematic : own->second.schematic;
}

const char* PlanStatusName(PlanStatus status) {
  switch (status) {
    case PlanStatus::kUpToDate:
      return "up-to-date";
    case PlanStatus::kPlanned:
      return "planned";
    case PlanStatus::kBlocked:
      return "blocked";
  }
  return "unknown";
}

const char* StepTypeName(StepType type) {
  return type == StepType::kTalos ? "talos" : "kubernetes";
}

std::vector<std::string> PlanStep::Nodes() const {
  std::vector<std::string> nodes;
  for (const auto& batch : batches) nodes.insert(nodes.end(), batch.begin(), batch.end());
  return nodes;
}

}  // namespace tr::core
