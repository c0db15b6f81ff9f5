// The run and its pre-checks and image pulls; the component steps are in k8s_upgrade_steps.cc.
#include "reconciler/operations/k8s_upgrade/k8s_upgrade.h"

#include "core/k8s_removals.h"
#include "fmt/format.h"
#include "reconciler/operations/k8s_upgrade/config_survey.h"
#include "reconciler/operations/k8s_upgrade/wait.h"
#include "yaml-cpp/yaml.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

constexpr const char* kPreChecks = "pre-checks";

std::vector<std::string> StringList(const YAML::Node& node) {
  std::vector<std::string> out;
  if (!node.IsSequence()) return out;
  for (const YAML::Node& item : node) out.push_back(item.as<std::string>(""));
  return out;
}

// The command line of a StaticPod resource's first container (command then args).
std::vector<std::string> StaticPodArgs(const std::string& yaml_spec) {
  try {
    const YAML::Node containers = YAML::Load(yaml_spec)["pod"]["spec"]["containers"];
    if (!containers.IsSequence() || containers.size() == 0) return {};
    std::vector<std::string> args = StringList(containers[0]["command"]);
    for (std::string& a : StringList(containers[0]["args"])) args.push_back(std::move(a));
    return args;
  } catch (const YAML::Exception&) {
    return {};
  }
}

std::vector<std::string> KubeletArgs(const std::string& yaml_spec) {
  try {
    return StringList(YAML::Load(yaml_spec)["args"]);
  } catch (const YAML::Exception&) {
    return {};
  }
}

}  // namespace

KubernetesUpgrade::KubernetesUpgrade(talos::TalosClient& talos, kube::KubeClient& kube, Env& env,
                                     UpgradeOptions options,
                                     std::function<void(const UpgradeProgress&)> on_progress)
    : talos_(talos),
      kube_(kube),
      env_(env),
      options_(std::move(options)),
      on_progress_(std::move(on_progress)) {
  // Control planes first, in the order given: the kubelets are upgraded in this order.
  std::stable_partition(options_.nodes.begin(), options_.nodes.end(),
                        [](const UpgradeNode& n) { return n.control_plane; });
}

UpgradeOutcome KubernetesUpgrade::Run(std::stop_token stop) {
  UpgradeOutcome outcome;
  auto finish = [&](Step failure) {
    if (failure) {
      outcome.status = failure->status;
      outcome.component = failure->component;
      outcome.node = failure->node;
    }
    return outcome;
  };
  if (Step s = PreChecks(outcome)) return finish(s);
  if (outcome.from == options_.target.ToString()) {
    // A run stopped after the kubelets still owes the manifests; otherwise nothing is applied.
    if (Step s = SyncManifests(stop, outcome)) return finish(s);
    Report("done", 0, 0,
           fmt::format("every component already runs Kubernetes {}", options_.target.ToString()));
    return outcome;
  }
  if (options_.pre_pull) {
    if (Step s = PrePull(stop)) return finish(s);
  }
  if (Step s = StaticPods(stop, outcome)) return finish(s);
  if (Step s = KubeProxy(stop, outcome)) return finish(s);
  if (Step s = Kubelets(stop, outcome)) return finish(s);
  if (Step s = SyncManifests(stop, outcome)) return finish(s);
  Report("done", 1, 1,
         fmt::format("Kubernetes {} → {}: done ({} applied, {} already at the target, {} "
                     "manifest object(s) applied{})",
                     outcome.from, options_.target.ToString(), outcome.applied,
                     outcome.already_done, outcome.manifests_applied,
                     outcome.manifests_pruned == 0
                         ? ""
                         : fmt::format(", {} pruned", outcome.manifests_pruned)));
  return outcome;
}

KubernetesUpgrade::Step KubernetesUpgrade::PreChecks(UpgradeOutcome& outcome) {
  if (options_.nodes.empty() || !options_.nodes.front().control_plane) {
    return Failure{absl::InvalidArgumentError("the cluster needs at least one control plane"),
                   kPreChecks, ""};
  }
  if (Step s = CheckTalosVersions()) return s;
  if (Step s = CheckConfigPlaces()) return s;
  if (Step s = CheckVersionPath(outcome)) return s;
  absl::StatusOr<core::Version> from = core::ParseKubernetesVersion(outcome.from);
  if (from.ok() && from->Minor() != options_.target.Minor()) return CheckRemovals(from->Minor());
  return std::nullopt;
}

KubernetesUpgrade::Step KubernetesUpgrade::CheckTalosVersions() {
  const core::MinorVersion target = options_.target.Minor();
  for (const UpgradeNode& node : options_.nodes) {
    absl::StatusOr<talos::NodeVersion> version = talos_.Version(node.address);
    if (!version.ok()) return Failure{version.status(), kPreChecks, node.name};
    if (options_.matrix.Supports(version->version.Minor(), target)) continue;
    std::optional<core::SupportMatrixEntry> row = options_.matrix.Find(version->version.Minor());
    const std::string range = row ? fmt::format("{} to {}", row->kubernetes_min.ToString(),
                                                row->kubernetes_max.ToString())
                                  : std::string("no known Kubernetes versions");
    return Failure{
        absl::FailedPreconditionError(fmt::format(
            "Talos {} on {} does not run Kubernetes {} (it runs {}): upgrade Talos first",
            version->tag, node.name, target.ToString(), range)),
        kPreChecks, node.name};
  }
  Report(kPreChecks, 1, 4,
         fmt::format("pre-checks: Talos on {} nodes runs Kubernetes {}", options_.nodes.size(),
                     target.ToString()));
  return std::nullopt;
}

KubernetesUpgrade::Step KubernetesUpgrade::CheckConfigPlaces() {
  // Every component on every node before the first change: a configuration that cannot be
  // patched (a component set twice, or nowhere) must not stop the run half-way.
  std::vector<std::string> shapes;
  for (const UpgradeNode& node : options_.nodes) {
    absl::StatusOr<std::string> config = MachineConfig(node);
    if (!config.ok()) return Failure{config.status(), kPreChecks, node.name};
    for (Component c : ComponentsOf(node.control_plane)) {
      absl::Status s = CheckPatchable(*config, c);
      if (s.ok()) continue;
      // A refusal like the other pre-checks (nothing changed); the message names the component.
      return Failure{absl::Status(s.code(), fmt::format("{} on {}: {}", ComponentName(c), node.name,
                                                        std::string(s.message()))),
                     kPreChecks, node.name};
    }
    shapes.push_back(fmt::format("{} {}", node.name,
                                 ConfigShape(*config, node.control_plane).value_or("unreadable")));
  }
  Report(kPreChecks, 2, 4,
         fmt::format("pre-checks: Kubernetes settings kept in: {}", fmt::join(shapes, ", ")));
  return std::nullopt;
}

KubernetesUpgrade::Step KubernetesUpgrade::CheckVersionPath(UpgradeOutcome& outcome) {
  std::optional<core::Version> lowest, highest;
  for (const UpgradeNode& node : options_.nodes) {
    absl::StatusOr<std::string> config = MachineConfig(node);
    if (!config.ok()) return Failure{config.status(), kPreChecks, node.name};
    for (Component c : ComponentsOf(node.control_plane)) {
      absl::StatusOr<std::string> image = ConfiguredImage(*config, c);
      if (!image.ok()) return Failure{image.status(), kPreChecks, node.name};
      absl::StatusOr<core::Version> v =
          core::ParseKubernetesVersion(ImageKubernetesVersion(*image));
      if (!v.ok()) continue;  // a custom tag: not part of the version path
      if (!lowest || *v < *lowest) lowest = *v;
      if (!highest || *v > *highest) highest = *v;
    }
  }
  if (!lowest) {
    return Failure{absl::InvalidArgumentError("no Kubernetes version found in the machine configs"),
                   kPreChecks, ""};
  }
  outcome.from = lowest->ToString();
  const core::MinorVersion target = options_.target.Minor();
  if (*highest > options_.target) {
    return Failure{absl::InvalidArgumentError(fmt::format(
                       "the cluster already runs Kubernetes {}: {} would be a downgrade",
                       highest->ToString(), options_.target.ToString())),
                   kPreChecks, ""};
  }
  if (lowest->Minor() != target && lowest->Minor().Next() != target) {
    return Failure{
        absl::FailedPreconditionError(fmt::format(
            "unsupported upgrade path {} → {}: one minor per run (next: {})", lowest->ToString(),
            options_.target.ToString(), lowest->Minor().Next().ToString())),
        kPreChecks, ""};
  }
  Report(kPreChecks, 3, 4,
         fmt::format("pre-checks: upgrade path {} → {}", outcome.from, options_.target.ToString()));
  return std::nullopt;
}

KubernetesUpgrade::Step KubernetesUpgrade::CheckRemovals(core::MinorVersion from) {
  const core::KubernetesRemovals removals = core::RemovalsForUpgrade(from, options_.target.Minor());
  for (const core::RemovedApiResource& api : removals.api_resources) {
    absl::StatusOr<int> count = kube_.CountObjects(api.ListPath());
    if (absl::IsNotFound(count.status()) || absl::IsUnimplemented(count.status())) continue;
    if (!count.ok()) return Failure{count.status(), kPreChecks, ""};
    if (*count == 0) continue;
    return Failure{absl::FailedPreconditionError(fmt::format(
                       "API {} is removed in Kubernetes {} and still holds {} object(s): migrate "
                       "or delete them first",
                       api.Name(), options_.target.Minor().ToString(), *count)),
                   kPreChecks, ""};
  }
  // The machine configuration first: what is found there can be named with the field to change.
  if (Step s = CheckRemovedInConfig(removals)) return s;
  if (Step s = CheckRemovedInRunningArgs(removals)) return s;
  Report(kPreChecks, 4, 4,
         "pre-checks: no removed API, flag, feature gate or admission plugin in use");
  return std::nullopt;
}

KubernetesUpgrade::Step KubernetesUpgrade::CheckRemovedInConfig(
    const core::KubernetesRemovals& removals) {
  std::vector<std::string> in_use;
  for (const UpgradeNode& node : options_.nodes) {
    absl::StatusOr<std::string> config = MachineConfig(node);
    if (!config.ok()) return Failure{config.status(), kPreChecks, node.name};
    for (Component c : ComponentsOf(node.control_plane)) {
      if (c == Component::kKubeProxy) continue;  // no removal table for kube-proxy
      absl::StatusOr<std::vector<std::string>> args = ConfiguredExtraArgs(*config, c);
      if (!args.ok()) return Failure{args.status(), kPreChecks, node.name};
      const bool kubelet = c == Component::kKubelet;
      const bool apiserver = c == Component::kApiServer;
      for (const std::string& item : core::RemovedItemsInArgs(
               *args,
               kubelet                              ? removals.kubelet_flags
               : apiserver                          ? removals.apiserver_flags
               : c == Component::kControllerManager ? removals.controller_manager_flags
                                                    : std::vector<std::string>{},
               kubelet ? std::vector<std::string>{} : removals.feature_gates,
               apiserver ? removals.admission_plugins : std::vector<std::string>{})) {
        const ConfigPlace place = PlaceOf(*config, c).value_or(ConfigPlace::kV1Alpha1);
        in_use.push_back(fmt::format("{} in {} of {}", item, ExtraArgsPath(c, place), node.name));
      }
    }
  }
  if (in_use.empty()) return std::nullopt;
  return Failure{absl::FailedPreconditionError(fmt::format(
                     "removed in Kubernetes {} but still set in the machine configuration: {}; "
                     "remove them from those extraArgs (a config patch) and run again",
                     options_.target.Minor().ToString(), fmt::join(in_use, "; "))),
                 kPreChecks, ""};
}

KubernetesUpgrade::Step KubernetesUpgrade::CheckRemovedInRunningArgs(
    const core::KubernetesRemovals& removals) {
  std::vector<std::string> in_use;
  for (const UpgradeNode& node : options_.nodes) {
    if (node.control_plane) {
      auto pods = talos_.CosiList(node.address, "k8s", "StaticPods.kubernetes.talos.dev");
      if (!pods.ok()) return Failure{pods.status(), kPreChecks, node.name};
      for (const talos::CosiResource& pod : *pods) {
        const bool apiserver = pod.id == "kube-apiserver";
        for (const std::string& item : core::RemovedItemsInArgs(
                 StaticPodArgs(pod.yaml_spec),
                 apiserver                             ? removals.apiserver_flags
                 : pod.id == "kube-controller-manager" ? removals.controller_manager_flags
                                                       : std::vector<std::string>{},
                 removals.feature_gates,
                 apiserver ? removals.admission_plugins : std::vector<std::string>{}))
          in_use.push_back(fmt::format("{} of {} on {}", item, pod.id, node.name));
      }
    }
    auto kubelet =
        talos_.CosiGet(node.address, "k8s", "KubeletSpecs.kubernetes.talos.dev", "kubelet");
    if (!kubelet.ok() && !absl::IsNotFound(kubelet.status())) {
      return Failure{kubelet.status(), kPreChecks, node.name};
    }
    if (!kubelet.ok()) continue;
    for (const std::string& item :
         core::RemovedItemsInArgs(KubeletArgs(kubelet->yaml_spec), removals.kubelet_flags, {}))
      in_use.push_back(fmt::format("{} of the kubelet on {}", item, node.name));
  }
  if (in_use.empty()) return std::nullopt;
  return Failure{absl::FailedPreconditionError(
                     fmt::format("removed in Kubernetes {} but still set: {}",
                                 options_.target.Minor().ToString(), fmt::join(in_use, "; "))),
                 kPreChecks, ""};
}

KubernetesUpgrade::Step KubernetesUpgrade::PrePull(std::stop_token stop) {
  struct Pull {
    const UpgradeNode* node;
    talos::ContainerdNamespace ns;
    std::string image;
  };
  std::vector<Pull> pulls;
  for (const UpgradeNode& node : options_.nodes) {
    absl::StatusOr<std::string> config = MachineConfig(node);
    if (!config.ok()) return Failure{config.status(), "image pull", node.name};
    for (Component c : ComponentsOf(node.control_plane)) {
      if (c == Component::kKubeProxy) continue;  // kube-proxy runs from the DaemonSet
      const std::string current = ConfiguredImage(*config, c).value_or("");
      if (current.empty() || current == TargetImage(current)) continue;
      pulls.push_back({&node,
                       c == Component::kKubelet ? talos::ContainerdNamespace::kSystem
                                                : talos::ContainerdNamespace::kCri,
                       TargetImage(current)});
    }
  }
  for (size_t i = 0; i < pulls.size(); ++i) {
    if (stop.stop_requested()) {
      return Failure{absl::CancelledError("stopped during the image pre-pull, nothing applied"),
                     "image pull", ""};
    }
    const Pull& p = pulls[i];
    absl::Status s = talos_.PullImageLegacy(p.node->address, p.ns, p.image);
    if (absl::IsUnimplemented(s)) continue;  // the node cannot pre-pull: the kubelet pulls later
    if (!s.ok()) {
      return Failure{absl::AbortedError(fmt::format("pulling {} on {} failed: {}", p.image,
                                                    p.node->name, std::string(s.message()))),
                     "image pull", p.node->name};
    }
    Report("image pull", static_cast<int>(i + 1), static_cast<int>(pulls.size()),
           fmt::format("image pull {}/{}: {} on {}", i + 1, pulls.size(), p.image, p.node->name));
  }
  return std::nullopt;
}

absl::StatusOr<std::string> KubernetesUpgrade::MachineConfig(const UpgradeNode& node) {
  return ReadMachineConfig(talos_, node.address, node.name);
}

std::string KubernetesUpgrade::TargetImage(const std::string& current) const {
  return RetaggedImage(current, options_.target.ToString());
}

void KubernetesUpgrade::Report(std::string phase, int done, int total, std::string message) {
  if (on_progress_) on_progress_({std::move(phase), done, total, std::move(message)});
}

}  // namespace tr::reconciler::k8s_upgrade
