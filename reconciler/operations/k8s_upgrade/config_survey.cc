#include "reconciler/operations/k8s_upgrade/config_survey.h"

#include "fmt/format.h"
#include "reconciler/operations/k8s_upgrade/machine_config.h"

namespace tr::reconciler::k8s_upgrade {

absl::StatusOr<std::string> ReadMachineConfig(talos::TalosClient& talos, const std::string& address,
                                              const std::string& node_name) {
  absl::StatusOr<talos::CosiResource> r =
      talos.CosiGet(address, "config", "MachineConfigs.config.talos.dev", "v1alpha1");
  if (!r.ok()) return r.status();
  if (r->yaml_spec.empty()) {
    return absl::InternalError(fmt::format("the MachineConfig of {} came without YAML", node_name));
  }
  return r->yaml_spec;
}

namespace {

core::NodeKubernetesConfig SurveyNode(talos::TalosClient& talos, const core::NodeSpec& spec) {
  core::NodeKubernetesConfig out{spec.name, "", ""};
  absl::StatusOr<std::string> config = ReadMachineConfig(talos, spec.address, spec.name);
  if (!config.ok()) {
    out.problem = "configuration not read: " + std::string(config.status().message());
    return out;
  }
  const bool control_plane = spec.role == core::NodeRole::kControlPlane;
  absl::StatusOr<std::string> shape = ConfigShape(*config, control_plane);
  if (!shape.ok()) {
    out.problem = std::string(shape.status().message());
    return out;
  }
  out.shape = *shape;
  for (Component c : ComponentsOf(control_plane)) {
    if (absl::Status s = CheckPatchable(*config, c); !s.ok()) {
      out.problem = fmt::format("{}: {}", ComponentName(c), std::string(s.message()));
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<core::NodeKubernetesConfig> SurveyKubernetesConfig(
    talos::TalosClient& talos, const core::ClusterProfile& profile,
    const core::ObservedCluster& observed) {
  std::vector<core::NodeKubernetesConfig> out;
  for (const core::NodeSpec& spec : profile.nodes) {
    const core::NodeObservation* seen = observed.FindNode(spec.name);
    if (seen == nullptr || !seen->reachable) continue;
    out.push_back(SurveyNode(talos, spec));
  }
  return out;
}

}  // namespace tr::reconciler::k8s_upgrade
