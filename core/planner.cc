#include "core/planner.h"

#include <algorithm>

#include "core/gates.h"
#include "core/upgrade_path.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

ClusterPlan Blocked(ClusterPlan plan, std::string message) {
  plan.status = PlanStatus::kBlocked;
  plan.message = std::move(message);
  plan.steps.clear();
  return plan;
}

// Every profile node must be observed with a Talos and a kubelet version.
std::string ObservationProblem(const ClusterProfile& profile, const ObservedCluster& observed) {
  for (const NodeSpec& node : profile.nodes) {
    const NodeObservation* seen = observed.FindNode(node.name);
    if (seen == nullptr) return fmt::format("node {} was not observed", node.name);
    if (!seen->reachable || !seen->talos) {
      return fmt::format("node {} is unreachable; every node must be reachable to plan", node.name);
    }
    if (!seen->kubelet) return fmt::format("node {} has no observed kubelet version", node.name);
  }
  return "";
}

// What a profile that names an Image Factory schematic cannot yet be planned for: its
// installer, or a node's own, unknown (no factory gave the schematic's ID), and a node on the
// desired version whose schematic could not be read (whether it needs a reinstall is not
// known).
std::string InstallerProblem(const ClusterProfile& profile, const ObservedCluster& observed) {
  if (!profile.talos_factory) return "";
  if (profile.talos_image.empty() || profile.talos_schematic_id.empty()) {
    return "the installer of spec.talos.schematic is not known: no Image Factory has given the "
           "schematic's ID";
  }
  for (const NodeSpec& node : profile.nodes) {
    if (node.schematic && (node.talos_image.empty() || node.talos_schematic_id.empty())) {
      return fmt::format(
          "the installer of node {}'s own schematic is not known: no Image Factory has given "
          "the schematic's ID",
          node.name);
    }
  }
  for (const NodeSpec& node : profile.nodes) {
    const NodeObservation& seen = *observed.FindNode(node.name);
    if (*seen.talos != profile.talos_version) continue;
    if (!seen.extensions_observed) {
      return fmt::format(
          "the schematic node {} runs is not known: its ExtensionStatuses could not be read",
          node.name);
    }
  }
  return "";
}

// A node on the desired Talos version whose schematic is not its desired one (its own, else
// the profile's): it is reinstalled at that version with that schematic's installer.
bool NeedsReinstall(const ClusterProfile& profile, const NodeSpec& node,
                    const NodeObservation& seen) {
  if (!profile.talos_factory || *seen.talos != profile.talos_version) return false;
  const std::optional<std::string> runs = RunningSchematic(seen);
  return runs && *runs != DesiredSchematicId(profile, node.name);
}

// The Talos hops with the reinstalls added: nodes needing one join the hop to the desired
// version, or, when every node already runs it, a hop from it to itself goes first.
std::vector<VersionHop> WithReinstalls(const ClusterProfile& profile,
                                       const ObservedCluster& observed,
                                       std::vector<VersionHop> hops) {
  const bool reinstall =
      std::any_of(profile.nodes.begin(), profile.nodes.end(), [&](const NodeSpec& node) {
        return NeedsReinstall(profile, node, *observed.FindNode(node.name));
      });
  const bool reaches_target = std::any_of(hops.begin(), hops.end(), [&](const VersionHop& hop) {
    return hop.talos && hop.to == profile.talos_version;
  });
  if (reinstall && !reaches_target) {
    hops.insert(hops.begin(), {true, profile.talos_version, profile.talos_version});
  }
  return hops;
}

template <typename Get>
std::pair<Version, Version> Range(const ClusterProfile& profile, const ObservedCluster& observed,
                                  Get get) {
  std::optional<Version> low, high;
  for (const NodeSpec& node : profile.nodes) {
    const Version& v = get(*observed.FindNode(node.name));
    if (!low || v < *low) low = v;
    if (!high || *high < v) high = v;
  }
  return {*low, *high};
}

std::string UnsupportedTargetMessage(const ClusterProfile& profile, const SupportMatrix& matrix) {
  const Version& t = profile.talos_version;
  const Version& k = profile.kubernetes_version;
  std::optional<SupportMatrixEntry> row = matrix.Find(t.Minor());
  if (!row) {
    return fmt::format(
        "Talos {} is not in the support matrix; add a row for {} under supportMatrix in "
        "reconciler.yaml",
        t.ToString(), t.Minor().ToString());
  }
  std::string advice = k.Minor() > row->kubernetes_max
                           ? "Raise talos.version to a release that supports it."
                           : "Raise kubernetes.version, or keep an older Talos.";
  return fmt::format("Talos {} does not support Kubernetes {} (it runs {} to {}). {}", t.ToString(),
                     k.ToString(), row->kubernetes_min.ToString(), row->kubernetes_max.ToString(),
                     advice);
}

// "w-0 (1.12.0), cp-1 (1.12.0)": the nodes whose version `get` is newer than `desired`, so that
// a halted revert says which nodes went ahead.
template <typename Get>
std::string NodesNewerThan(const ClusterProfile& profile, const ObservedCluster& observed,
                           const Version& desired, Get get) {
  std::string nodes;
  for (const NodeSpec& node : profile.nodes) {
    const Version& v = get(*observed.FindNode(node.name));
    if (!(desired < v)) continue;
    nodes += fmt::format("{}{} ({})", nodes.empty() ? "" : ", ", node.name, v.ToString());
  }
  return nodes;
}

// A downgrade that is not allowed: what the nodes ahead of the desired version run, and that
// nothing goes back by itself (a reverted bump must not undo or redo anything unasked).
std::string NotDowngrading(std::string_view what, const std::string& nodes, const Version& desired,
                           const Version& high) {
  const bool one = nodes.find(',') == std::string::npos;
  return fmt::format(
      "a downgrade is not performed: {} {} {} newer than the desired {}; set "
      "policy.allowDowngrade to go back, or ask for {} again to go on",
      nodes, one ? "runs" : "run", what, desired.ToString(), high.ToString());
}

// Downgrades: Talos only with allowDowngrade; Kubernetes never across a minor.
std::string DowngradeProblem(const ClusterProfile& profile, const ObservedCluster& observed,
                             const Version& talos_low, const Version& talos_high,
                             const Version& kube_high) {
  const bool allowed = profile.policy.allow_downgrade;
  if (profile.talos_version < talos_high) {
    if (!allowed) {
      return NotDowngrading("Talos",
                            NodesNewerThan(profile, observed, profile.talos_version,
                                           [](const NodeObservation& n) { return *n.talos; }),
                            profile.talos_version, talos_high);
    }
    if (talos_low < profile.talos_version) {
      return fmt::format(
          "nodes run Talos {} to {}, both sides of the desired {}; bring them to "
          "one version first",
          talos_low.ToString(), talos_high.ToString(), profile.talos_version.ToString());
    }
  }
  if (profile.kubernetes_version < kube_high) {
    if (profile.kubernetes_version.Minor() != kube_high.Minor()) {
      return fmt::format(
          "Kubernetes cannot be downgraded from {} to {}: only patch "
          "downgrades within a minor are possible",
          kube_high.ToString(), profile.kubernetes_version.ToString());
    }
    if (!allowed) {
      return NotDowngrading("Kubernetes",
                            NodesNewerThan(profile, observed, profile.kubernetes_version,
                                           [](const NodeObservation& n) { return *n.kubelet; }),
                            profile.kubernetes_version, kube_high);
    }
  }
  return "";
}

bool NeedsHop(const Version& current, const VersionHop& hop) {
  return hop.from < hop.to ? current < hop.to : hop.to < current;
}

// Talos order: workers (own node last) in batches, then control planes one at a time with
// the etcd leader last and the own node last among the rest.
std::vector<std::vector<std::string>> TalosBatches(const ClusterProfile& profile,
                                                   const ObservedCluster& observed,
                                                   const VersionHop& hop) {
  std::vector<std::string> workers, control_planes;
  std::string own_worker, own_control_plane, leader;
  for (const NodeSpec& node : profile.nodes) {
    const NodeObservation& seen = *observed.FindNode(node.name);
    const bool reinstall = hop.to == profile.talos_version && NeedsReinstall(profile, node, seen);
    if (!NeedsHop(*seen.talos, hop) && !reinstall) continue;
    const bool own = node.name == observed.self_node;
    if (node.role == NodeRole::kWorker) {
      if (own) {
        own_worker = node.name;
      } else {
        workers.push_back(node.name);
      }
    } else if (seen.etcd_leader) {
      leader = node.name;
    } else if (own) {
      own_control_plane = node.name;
    } else {
      control_planes.push_back(node.name);
    }
  }
  if (!own_worker.empty()) workers.push_back(own_worker);
  if (!own_control_plane.empty()) control_planes.push_back(own_control_plane);
  if (!leader.empty()) control_planes.push_back(leader);

  std::vector<std::vector<std::string>> batches;
  const size_t width = static_cast<size_t>(std::max(1, profile.policy.max_parallel_workers));
  for (size_t i = 0; i < workers.size(); i += width) {
    batches.emplace_back(
        workers.begin() + static_cast<std::ptrdiff_t>(i),
        workers.begin() + static_cast<std::ptrdiff_t>(std::min(i + width, workers.size())));
  }
  for (const std::string& cp : control_planes) batches.push_back({cp});
  return batches;
}

// Kubernetes order (upgrade-k8s): control planes, then workers, one node at a time.
std::vector<std::vector<std::string>> KubernetesBatches(const ClusterProfile& profile,
                                                        const ObservedCluster& observed,
                                                        const VersionHop& hop) {
  std::vector<std::vector<std::string>> batches;
  for (NodeRole role : {NodeRole::kControlPlane, NodeRole::kWorker}) {
    for (const NodeSpec& node : profile.nodes) {
      if (node.role != role) continue;
      if (NeedsHop(*observed.FindNode(node.name)->kubelet, hop)) batches.push_back({node.name});
    }
  }
  return batches;
}

// The step's nodes whose own schematic differs from the profile's, with their installer.
std::map<std::string, NodeInstaller> OwnInstallers(const ClusterProfile& profile,
                                                   const PlanStep& step) {
  std::map<std::string, NodeInstaller> own;
  for (const std::string& name : step.Nodes()) {
    for (const NodeSpec& node : profile.nodes) {
      if (node.name != name || !node.schematic) continue;
      if (node.talos_schematic_id == profile.talos_schematic_id) continue;
      own[name] = {node.talos_image + ":" + step.to.Tag(), node.talos_schematic_id};
    }
  }
  return own;
}

std::vector<PlanStep> BuildSteps(const ClusterProfile& profile, const ObservedCluster& observed,
                                 const std::vector<VersionHop>& hops) {
  std::vector<PlanStep> steps;
  for (const VersionHop& hop : hops) {
    PlanStep step{.type = hop.talos ? StepType::kTalos : StepType::kKubernetes,
                  .from = hop.from,
                  .to = hop.to,
                  .batches = {},
                  .installer_image = {},
                  .schematic = {},
                  .own_installers = {}};
    if (hop.talos) {
      step.batches = TalosBatches(profile, observed, hop);
      step.installer_image = profile.talos_image + ":" + hop.to.Tag();
      step.schematic = profile.talos_schematic_id;
      step.own_installers = OwnInstallers(profile, step);
    } else {
      step.batches = KubernetesBatches(profile, observed, hop);
    }
    if (!step.batches.empty()) steps.push_back(std::move(step));
  }
  return steps;
}

std::string Summary(const ClusterPlan& plan) {
  std::string s;
  for (const PlanStep& step : plan.steps) {
    if (!s.empty()) s += ", then ";
    s += fmt::format("{} on {} node{}", StepTitle(step), step.Nodes().size(),
                     step.Nodes().size() == 1 ? "" : "s");
  }
  return s;
}

}  // namespace

std::string StepTitle(const PlanStep& step) {
  if (step.type == StepType::kTalos && step.from == step.to) {
    std::string ids;
    bool several = false;
    for (const std::string& node : step.Nodes()) {
      const std::string& id = SchematicFor(step, node);
      if (ids.find(id) != std::string::npos) continue;
      several = !ids.empty();
      ids += (ids.empty() ? "" : ", ") + id;
    }
    return fmt::format("Talos {} reinstalled with schematic{} {}", step.to.ToString(),
                       several ? "s" : "", ids);
  }
  return fmt::format("{} {} → {}", step.type == StepType::kTalos ? "Talos" : "Kubernetes",
                     step.from.ToString(), step.to.ToString());
}

bool UsesLifecycleApi(const Version& version) {
  static const Version kFirst = *ParseTalosVersion("1.13.0-alpha.2");
  return kFirst < version && version.major < 2;
}

namespace {

std::string BrokenMessage(const Version& release) {
  return fmt::format(
      "Talos {} is marked broken by the Image Factory (listed at /versions?broken=true): no "
      "further node is upgraded to it; choose another release",
      release.ToString());
}

// A Talos release marked broken that a node would still be upgraded to: the target while a
// node runs another version (checked before the installer, which a factory no longer builds
// for it), or a hop on the way. A cluster whose nodes all run it already is not blocked; one
// half-way stops before its next node.
std::optional<Version> BrokenRelease(const ClusterProfile& profile, const Version& talos_low,
                                     const Version& talos_high, const std::vector<PlanStep>& steps,
                                     const ReleaseCatalog& catalog) {
  const bool all_on_target = talos_low == profile.talos_version && talos_high == talos_low;
  if (!all_on_target && catalog.IsTalosBroken(profile.talos_version)) return profile.talos_version;
  for (const PlanStep& step : steps) {
    if (step.type == StepType::kTalos && catalog.IsTalosBroken(step.to)) return step.to;
  }
  return std::nullopt;
}

ClusterPlan BlockedByBroken(ClusterPlan plan, const Version& release) {
  plan.broken_release = release;
  return Blocked(std::move(plan), BrokenMessage(release));
}

}  // namespace

ClusterPlan PlanCluster(const ClusterProfile& profile, const ObservedCluster& observed,
                        const SupportMatrix& matrix, const ReleaseCatalog& catalog) {
  ClusterPlan plan{.cluster = profile.name,
                   .status = PlanStatus::kUpToDate,
                   .message = {},
                   .paused = profile.policy.paused,
                   .talos_current = std::nullopt,
                   .kubernetes_current = std::nullopt,
                   .talos_target = profile.talos_version,
                   .kubernetes_target = profile.kubernetes_version,
                   .steps = {},
                   .gates = {},
                   .estimate = std::chrono::seconds{0},
                   .broken_release = std::nullopt};
  if (std::string problem = ObservationProblem(profile, observed); !problem.empty()) {
    return Blocked(std::move(plan), problem);
  }
  auto [talos_low, talos_high] =
      Range(profile, observed, [](const NodeObservation& n) -> const Version& { return *n.talos; });
  auto [kube_low, kube_high] = Range(
      profile, observed, [](const NodeObservation& n) -> const Version& { return *n.kubelet; });
  plan.talos_current = talos_low;
  plan.kubernetes_current = kube_low;

  if (!matrix.Supports(profile.talos_version.Minor(), profile.kubernetes_version.Minor())) {
    return Blocked(std::move(plan), UnsupportedTargetMessage(profile, matrix));
  }
  if (std::string problem = DowngradeProblem(profile, observed, talos_low, talos_high, kube_high);
      !problem.empty()) {
    return Blocked(std::move(plan), problem);
  }
  if (auto broken = BrokenRelease(profile, talos_low, talos_high, {}, catalog)) {
    return BlockedByBroken(std::move(plan), *broken);
  }
  if (std::string problem = InstallerProblem(profile, observed); !problem.empty()) {
    return Blocked(std::move(plan), problem);
  }
  const Version& talos_start = profile.talos_version < talos_high ? talos_high : talos_low;
  auto talos_stops = VersionStops(talos_start, profile.talos_version, "Talos",
                                  [&](MinorVersion m) { return catalog.LatestTalos(m); });
  auto kube_stops = VersionStops(kube_low, profile.kubernetes_version, "Kubernetes",
                                 [&](MinorVersion m) { return catalog.LatestKubernetes(m); });
  if (!talos_stops.ok())
    return Blocked(std::move(plan), std::string(talos_stops.status().message()));
  if (!kube_stops.ok()) return Blocked(std::move(plan), std::string(kube_stops.status().message()));
  auto hops = FindUpgradePath(*talos_stops, *kube_stops, profile.policy.upgrade_order, matrix);
  if (!hops.ok()) return Blocked(std::move(plan), std::string(hops.status().message()));

  plan.steps = BuildSteps(profile, observed, WithReinstalls(profile, observed, *hops));
  if (auto broken = BrokenRelease(profile, talos_low, talos_high, plan.steps, catalog)) {
    return BlockedByBroken(std::move(plan), *broken);
  }
  if (plan.steps.empty()) {
    plan.message =
        fmt::format("Talos {} and Kubernetes {} on every node", profile.talos_version.ToString(),
                    profile.kubernetes_version.ToString());
    return plan;
  }
  plan.status = PlanStatus::kPlanned;
  plan.message = Summary(plan);
  if (plan.paused) plan.message = "paused by policy; would run: " + plan.message;
  plan.gates = PlanGates(profile, plan);
  plan.estimate = EstimateDuration(profile, observed, plan);
  return plan;
}

}  // namespace tr::core
