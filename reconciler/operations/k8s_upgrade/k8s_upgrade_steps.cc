// The component steps of KubernetesUpgrade: control-plane static pods, kube-proxy, kubelets.
#include "fmt/format.h"
#include "reconciler/operations/k8s_upgrade/k8s_upgrade.h"
#include "reconciler/operations/k8s_upgrade/wait.h"
#include "yaml-cpp/yaml.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

// The controlplane resource whose version a static pod's talos.dev/config-version carries.
const char* ConfigResourceType(Component component) {
  switch (component) {
    case Component::kApiServer:
      return "APIServerConfigs.kubernetes.talos.dev";
    case Component::kControllerManager:
      return "ControllerManagerConfigs.kubernetes.talos.dev";
    default:
      return "SchedulerConfigs.kubernetes.talos.dev";
  }
}

std::string YamlImage(const std::string& yaml_spec) {
  try {
    const YAML::Node image = YAML::Load(yaml_spec)["image"];
    return image.IsScalar() ? image.as<std::string>() : "";
  } catch (const YAML::Exception&) {
    return "";
  }
}

std::string Seconds(std::chrono::milliseconds d) {
  return fmt::format("{}s", std::chrono::duration_cast<std::chrono::seconds>(d).count());
}

}  // namespace

KubernetesUpgrade::Step KubernetesUpgrade::StaticPods(std::stop_token stop,
                                                      UpgradeOutcome& outcome) {
  int control_planes = 0;
  for (const UpgradeNode& n : options_.nodes) control_planes += n.control_plane ? 1 : 0;
  const int total = 3 * control_planes;
  int done = 0;
  for (Component c :
       {Component::kApiServer, Component::kControllerManager, Component::kScheduler}) {
    for (const UpgradeNode& node : options_.nodes) {
      if (!node.control_plane) continue;
      if (stop.stop_requested()) return Stopped(ComponentName(c), node);
      bool applied = false;
      if (Step s = EnsureImage(node, c, &applied)) return s;
      (applied ? outcome.applied : outcome.already_done) += 1;
      if (Step s = WaitStaticPod(stop, node, c)) return s;
      ++done;
      Report("static pods", done, total,
             fmt::format("static pods {}/{}: {} on {} Ready at {}", done, total, ComponentName(c),
                         node.name, options_.target.ToString()));
    }
  }
  return std::nullopt;
}

KubernetesUpgrade::Step KubernetesUpgrade::KubeProxy(std::stop_token stop,
                                                     UpgradeOutcome& outcome) {
  int done = 0;
  for (const UpgradeNode& node : options_.nodes) {
    if (!node.control_plane) continue;
    if (stop.stop_requested()) return Stopped("kube-proxy", node);
    bool applied = false;
    if (Step s = EnsureImage(node, Component::kKubeProxy, &applied)) return s;
    (applied ? outcome.applied : outcome.already_done) += 1;
    ++done;
    Report("kube-proxy", done, done, fmt::format("kube-proxy: image set on {}", node.name));
  }
  return std::nullopt;
}

KubernetesUpgrade::Step KubernetesUpgrade::Kubelets(std::stop_token stop, UpgradeOutcome& outcome) {
  const int total = static_cast<int>(options_.nodes.size());
  int done = 0;
  for (const UpgradeNode& node : options_.nodes) {  // control planes first (constructor)
    if (stop.stop_requested()) return Stopped("kubelet", node);
    bool applied = false;
    if (Step s = EnsureImage(node, Component::kKubelet, &applied)) return s;
    (applied ? outcome.applied : outcome.already_done) += 1;
    if (Step s = WaitKubelet(stop, node)) return s;
    ++done;
    Report("kubelets", done, total,
           fmt::format("kubelets {}/{}: {} at v{}", done, total, node.name,
                       options_.target.ToString()));
  }
  return std::nullopt;
}

KubernetesUpgrade::Failure KubernetesUpgrade::Stopped(std::string_view component,
                                                      const UpgradeNode& node) {
  return Failure{absl::CancelledError(fmt::format("stopped before {} on {}, nothing of it applied",
                                                  component, node.name)),
                 std::string(component), node.name};
}

KubernetesUpgrade::Step KubernetesUpgrade::Fenced(std::string_view component,
                                                  const UpgradeNode& node) {
  if (!options_.before_change) return std::nullopt;
  absl::Status held = options_.before_change();
  if (held.ok()) return std::nullopt;
  return Failure{
      absl::CancelledError(fmt::format("stopped before {} on {}, nothing of it applied: {}",
                                       component, node.name, std::string(held.message()))),
      std::string(component), node.name};
}

KubernetesUpgrade::Failure KubernetesUpgrade::StoppedWaiting(std::string_view component,
                                                             const UpgradeNode& node) {
  return Failure{absl::CancelledError(fmt::format(
                     "stopped while waiting for {} on {}: its configuration is applied, a new "
                     "run only waits for it",
                     component, node.name)),
                 std::string(component), node.name};
}

KubernetesUpgrade::Step KubernetesUpgrade::EnsureImage(const UpgradeNode& node, Component component,
                                                       bool* applied) {
  const std::string name(ComponentName(component));
  absl::StatusOr<std::string> config = MachineConfig(node);
  if (!config.ok()) return Failure{config.status(), name, node.name};
  absl::StatusOr<std::string> current = ConfiguredImage(*config, component);
  if (!current.ok()) return Failure{current.status(), name, node.name};
  if (current->empty()) {
    return Failure{absl::FailedPreconditionError(
                       fmt::format("{} has no {} image in its machine config", node.name, name)),
                   name, node.name};
  }
  const std::string target = TargetImage(*current);
  *applied = *current != target;
  if (!*applied) return std::nullopt;
  absl::StatusOr<std::string> patched = WithImage(*config, component, target);
  if (!patched.ok()) return Failure{patched.status(), name, node.name};
  if (Step s = Fenced(name, node)) return s;
  Report("apply", 0, 1,
         fmt::format("{} on {}: {} → {} (apply, no reboot)", name, node.name, *current, target));
  talos::ApplyConfigurationRequest request;
  request.config_yaml = *std::move(patched);
  request.mode = talos::ApplyMode::kNoReboot;
  absl::StatusOr<talos::ApplyConfigurationResult> result =
      talos_.ApplyConfiguration(node.address, request);
  if (!result.ok()) return Failure{result.status(), name, node.name};
  return std::nullopt;
}

KubernetesUpgrade::Step KubernetesUpgrade::WaitStaticPod(std::stop_token stop,
                                                         const UpgradeNode& node,
                                                         Component component) {
  const std::string name(ComponentName(component));
  std::string version, seen, error;
  std::string target;
  // The component's config resource first: its version is what the new static pod carries.
  absl::Status waited = PollUntil(
      env_, stop, options_.poll_interval, options_.static_pod_timeout,
      [&]() -> absl::StatusOr<bool> {
        auto r = talos_.CosiGet(node.address, "controlplane", ConfigResourceType(component), name);
        if (!r.ok()) return r.status();
        const std::string image = YamlImage(r->yaml_spec);
        if (target.empty()) target = TargetImage(image);
        version = r->version;
        return image == target;
      },
      &error);
  if (waited.ok()) {
    waited = PollUntil(
        env_, stop, options_.poll_interval, options_.static_pod_timeout,
        [&]() -> absl::StatusOr<bool> {
          auto pods = kube_.ListPods("kube-system", "k8s-app=" + name);
          if (!pods.ok()) return pods.status();
          for (const kube::KubePodDetail& p : *pods) {
            if (p.pod.node != node.name && p.host_ip != node.address) continue;
            seen = fmt::format("image {}, config version {}, {}", p.image, p.config_version,
                               p.ready ? "Ready" : "not Ready");
            if (p.config_version == version && p.image == target && p.ready) return true;
          }
          return false;
        },
        &error);
  }
  if (waited.ok()) return std::nullopt;
  if (absl::IsCancelled(waited)) return StoppedWaiting(name, node);
  return Failure{absl::AbortedError(fmt::format(
                     "{} on {}: the static pod did not run {} Ready (config version {}) within "
                     "{}; last seen: {}{}",
                     name, node.name, target, version, Seconds(options_.static_pod_timeout),
                     seen.empty() ? "no pod" : seen, error.empty() ? "" : "; " + error)),
                 name, node.name};
}

KubernetesUpgrade::Step KubernetesUpgrade::WaitKubelet(std::stop_token stop,
                                                       const UpgradeNode& node) {
  const std::string want = "v" + options_.target.ToString();
  std::string seen, error;
  absl::Status waited = PollUntil(
      env_, stop, options_.poll_interval, options_.kubelet_timeout,
      [&]() -> absl::StatusOr<bool> {
        auto nodes = kube_.ListNodes();
        if (!nodes.ok()) return nodes.status();
        for (const kube::KubeNode& n : *nodes) {
          const bool address_match =
              std::find(n.addresses.begin(), n.addresses.end(), node.address) != n.addresses.end();
          if (n.name != node.name && !address_match) continue;
          seen = fmt::format("Node {} kubelet {}, {}", n.name, n.kubelet_version,
                             n.ready ? "Ready" : "NotReady");
          return n.kubelet_version == want && n.ready;
        }
        return false;
      },
      &error);
  if (waited.ok()) return std::nullopt;
  if (absl::IsCancelled(waited)) return StoppedWaiting("kubelet", node);
  std::string service = "unknown";
  if (auto services = talos_.ServiceList(node.address); services.ok()) {
    service = "absent";
    for (const talos::ServiceState& s : *services) {
      if (s.id == "kubelet") service = s.state + (s.Healthy() ? ", healthy" : ", not healthy");
    }
  }
  return Failure{absl::AbortedError(fmt::format(
                     "kubelet on {} did not come back at {} and Ready within {}; last seen: {}; "
                     "Talos kubelet service: {}{}",
                     node.name, want, Seconds(options_.kubelet_timeout),
                     seen.empty() ? "no Node" : seen, service, error.empty() ? "" : "; " + error)),
                 "kubelet", node.name};
}

}  // namespace tr::reconciler::k8s_upgrade
