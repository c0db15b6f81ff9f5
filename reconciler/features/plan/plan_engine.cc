#include "reconciler/features/plan/plan_engine.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/env.h"
#include "core/cluster_report.h"
#include "core/disruption_forecast.h"
#include "core/gates.h"
#include "core/health_gates.h"
#include "core/observed_decode.h"
#include "core/plan_outlook.h"
#include "core/plan_render.h"
#include "core/planner.h"
#include "core/profile_set.h"
#include "core/promotion.h"
#include "core/status_decode.h"
#include "core/status_yaml.h"
#include "fmt/format.h"
#include "gitsource/snapshot.h"
#include "reconciler/clients/factory/broken_releases.h"
#include "reconciler/clients/factory/factory_installers.h"
#include "reconciler/clients/factory/preview_installers.h"
#include "reconciler/features/plan/drain_survey.h"
#include "reconciler/operations/k8s_upgrade/config_survey.h"
#include "reconciler/operations/observer.h"
#include "reconciler/runtime/timezones.h"
#include "reconciler/runtime/windows.h"

namespace tr::reconciler {
namespace {

core::ProfileSet DecodeProfiles(const std::vector<core::SourceFile>& files, int shards = 0) {
  core::ValidationOptions options;
  options.is_known_timezone = IsKnownTimezone;
  options.shards = shards;
  return core::DecodeProfileSet(files, options);
}

// Reads and decodes the repository at `dir`; nullopt (after printing why) when unreadable.
std::optional<core::ProfileSet> LoadProfiles(const std::filesystem::path& dir, int shards,
                                             std::ostream& err) {
  // "0 of 0 profiles valid" for a mistyped directory would pass a CI check that checks nothing.
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec) &&
      !std::filesystem::is_directory(dir / "clusters", ec)) {
    err << "error: " << dir.string()
        << " has no clusters/ directory; is it a checkout of a profile repository?\n";
    return std::nullopt;
  }
  absl::StatusOr<gitsource::ProfileSnapshot> snapshot = gitsource::ReadDirectorySnapshot(dir);
  if (!snapshot.ok()) {
    err << "error: " << snapshot.status().message() << "\n";
    return std::nullopt;
  }
  return DecodeProfiles(snapshot->files, shards);
}

std::optional<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::optional<core::ObservedFleet> LoadObserved(const std::filesystem::path& path,
                                                std::ostream& err) {
  std::optional<std::string> content = ReadFile(path);
  if (!content) {
    err << "error: cannot read the observed-state file " << path.string() << "\n";
    return std::nullopt;
  }
  core::Decoded<core::ObservedFleet> fleet = core::DecodeObservedFleet(path.string(), *content);
  for (const core::Diagnostic& d : fleet.diagnostics) err << d.ToString() << "\n";
  return fleet.value;
}

// Why clusters could not be observed, by cluster.
using Unobserved = std::map<std::string, std::string>;
// Why the schematics of clusters could not be resolved, by cluster.
using Unresolved = std::map<std::string, std::string>;
// Where the observed nodes of a cluster keep their Kubernetes settings (k8s_upgrade/config_survey.h).
using ConfigSurvey = std::function<std::vector<core::NodeKubernetesConfig>(
    const std::string& cluster, const core::ObservedCluster& observed)>;

// Fills in the installer and schematic ID of every profile that names a schematic. A profile
// that cannot be resolved is left without them, so the planner blocks it, and the resolver's
// error (naming the factory) is in `unresolved`. Only the profiles `wanted` are asked about.
// As the daemon does, a cluster with a node in flight (in `statuses`) skips the extension
// check: the daemon follows that node whether or not the factory answers.
Unresolved ResolveSchematics(
    factory::InstallerResolver& installers, std::vector<core::ClusterProfile>& profiles,
    const std::function<bool(const core::ClusterProfile&)>& wanted = nullptr,
    const std::map<std::string, core::ClusterStatus>& statuses = {}) {
  Unresolved unresolved;
  for (core::ClusterProfile& profile : profiles) {
    if (!profile.talos_factory || (wanted && !wanted(profile))) continue;
    const auto status = statuses.find(profile.name);
    const bool in_flight =
        status != statuses.end() && !status->second.rollout.in_flight.empty();
    absl::StatusOr<core::ClusterProfile> resolved = installers.Resolve(profile, !in_flight);
    if (!resolved.ok()) {
      unresolved[profile.name] = std::string(resolved.status().message());
      continue;
    }
    profile = *std::move(resolved);
  }
  return unresolved;
}

// The factories the schematic profiles of `profiles` are resolved at: their own, else
// `default_origin` (--image-factory).
std::set<std::string> FactoryOrigins(const std::vector<core::ClusterProfile>& profiles,
                                     const std::string& default_origin) {
  std::set<std::string> origins;
  for (const core::ClusterProfile& p : profiles) {
    if (!p.talos_factory) continue;
    const std::string& origin =
        p.talos_factory->factory.empty() ? default_origin : p.talos_factory->factory;
    if (!origin.empty()) origins.insert(origin);
  }
  return origins;
}

// A pull request's profiles get the factory the watched branch names for their cluster (its
// profile's, which includes its reconciler.yaml's imageFactory, else that imageFactory; empty:
// the daemon's --image-factory): the proposal's own spec.talos.factory is never dialled.
void UseTrustedFactories(const core::ProfileSet& trusted,
                         std::vector<core::ClusterProfile>& proposed) {
  for (core::ClusterProfile& profile : proposed) {
    if (!profile.talos_factory) continue;
    std::string origin = trusted.defaults.image_factory;
    for (const core::ClusterProfile& base : trusted.profiles) {
      if (base.name == profile.name && base.talos_factory && !base.talos_factory->factory.empty()) {
        origin = base.talos_factory->factory;
      }
    }
    profile.talos_factory->factory = origin;
  }
}

// Observes every valid profile's cluster; a cluster that cannot be observed is left out (and
// so planned as blocked) with its error in `unobserved`, and printed. (A talosconfig of
// another cluster is such an error, naming the file and field: see TalosFleetObserver.)
core::ObservedFleet ObserveWith(TalosFleetObserver& observer, const core::ProfileSet& set,
                                Unobserved& unobserved, std::ostream& err) {
  core::ObservedFleet fleet;
  for (const core::ClusterProfile& profile : set.profiles) {
    absl::StatusOr<core::ObservedCluster> observed = observer.Observe(profile);
    if (!observed.ok()) {
      err << profile.name << ": cannot observe: " << observed.status().message() << "\n";
      unobserved[profile.name] = std::string(observed.status().message());
      continue;
    }
    fleet.clusters.push_back(*std::move(observed));
  }
  return fleet;
}

// The recorded status of each valid profile's cluster found under `dir` (a checkout of the
// status branch); nullopt (after printing why) when a file there cannot be read back.
std::optional<std::map<std::string, core::ClusterStatus>> LoadStatuses(
    const std::filesystem::path& dir, const core::ProfileSet& set, std::ostream& err) {
  std::map<std::string, core::ClusterStatus> statuses;
  if (dir.empty()) return statuses;
  // A wrong directory would read as "nothing recorded" and hide every recorded failure.
  std::error_code ec;
  if (!std::filesystem::is_directory(dir / core::kStatusDirectory, ec)) {
    err << fmt::format(
        "error: --status {}: not a checkout of the status branch (it has no {}/ directory; "
        "git worktree add DIR talos-reconciler/status)\n",
        dir.string(), core::kStatusDirectory);
    return std::nullopt;
  }
  for (const core::ClusterProfile& profile : set.profiles) {
    const std::filesystem::path path = dir / core::ClusterStatusPath(profile.name);
    std::optional<std::string> content = ReadFile(path);
    if (!content) continue;  // never recorded: the plan shows no last answers
    core::Decoded<core::ClusterStatus> status = core::DecodeClusterStatus(path.string(), *content);
    for (const core::Diagnostic& d : status.diagnostics) err << d.ToString() << "\n";
    if (!status.ok()) return std::nullopt;
    statuses[profile.name] = *std::move(status.value);
  }
  return statuses;
}

// What the recorded statuses say about `profile`'s start checks; points into `statuses`.
core::StartCheckAnswers AnswersOf(const core::ClusterProfile& profile,
                                  const core::ClusterPlan& plan,
                                  const std::map<std::string, core::ClusterStatus>& statuses,
                                  core::TimePoint now) {
  core::StartCheckAnswers answers;
  auto own = statuses.find(profile.name);
  if (own != statuses.end()) answers.gates = &own->second.gates;
  if (profile.promotion && plan.status == core::PlanStatus::kPlanned) {
    const core::RolloutMemory memory =
        own != statuses.end() ? own->second.rollout : core::RolloutMemory{};
    answers.promotion = core::EvaluatePromotion(profile, plan, memory, statuses, now);
  }
  return answers;
}

// Surveys the clusters of `set` (their nodes dialled at `set`'s endpoints) through `clients`.
ConfigSurvey SurveyThrough(ClusterClientFactory& clients, const core::ProfileSet& set) {
  return [&clients, &set](const std::string& cluster, const core::ObservedCluster& observed) {
    std::vector<core::NodeKubernetesConfig> none;
    for (const core::ClusterProfile& profile : set.profiles) {
      if (profile.name != cluster) continue;
      absl::StatusOr<ClusterClients> c = clients.ForProfile(profile);
      if (!c.ok()) return none;
      return k8s_upgrade::SurveyKubernetesConfig(*c->talos, profile, observed);
    }
    return none;
  };
}

bool ObservesLive(const PlanOptions& options) {
  return !options.credentials_dir.empty() || !options.talosconfig.empty();
}

std::unique_ptr<TalosconfigClientFactory> LiveClients(const PlanOptions& options, Env& env) {
  return std::make_unique<TalosconfigClientFactory>(
      TalosCredentials{options.credentials_dir, options.talosconfig},
      talos::GrpcTalosClientOptions{}, env);
}

// Observed through `clients` when given, else read from the observed-state file.
std::optional<core::ObservedFleet> ObserveThrough(ClusterClientFactory* clients,
                                                  const core::ProfileSet& set,
                                                  const PlanOptions& options,
                                                  Unobserved& unobserved, std::ostream& err) {
  if (clients == nullptr) return LoadObserved(options.observed_file, err);
  TalosFleetObserver observer(*clients, options.self_node);
  return ObserveWith(observer, set, unobserved, err);
}

// The profile's nodes as observed, in the status file's terms.
std::vector<core::NodeStatus> NodesOf(const core::ClusterProfile& profile,
                                      const core::ObservedCluster* observed) {
  std::vector<core::NodeStatus> nodes;
  for (const core::NodeSpec& spec : profile.nodes) {
    core::NodeStatus n;
    n.name = spec.name;
    n.role = core::NodeRoleName(spec.role);
    const core::NodeObservation* seen = observed ? observed->FindNode(spec.name) : nullptr;
    n.reachable = seen != nullptr && seen->reachable;
    n.ready = seen != nullptr && seen->ready;
    if (seen && seen->talos) n.talos = seen->talos->ToString();
    if (seen && seen->kubelet) n.kubelet = seen->kubelet->ToString();
    nodes.push_back(std::move(n));
  }
  return nodes;
}

// What the daemon would do with `plan` now. With a status checkout (`status_known`), from what
// the cluster's recorded status (`status`, null when it has none) and the promotion say.
core::PlanOutlook Outlook(const core::ClusterProfile& profile, const core::ClusterPlan& plan,
                          const core::ObservedCluster& observed, bool status_known,
                          const core::ClusterStatus* status, const core::StartCheckAnswers& answers,
                          bool kubernetes_upgrades, core::TimePoint now) {
  core::OutlookInput in{profile,
                        plan,
                        observed,
                        {},
                        EvaluateWindows(profile.policy.windows, now),
                        {},
                        std::nullopt,
                        kubernetes_upgrades,
                        false,
                        now};
  if (status_known) in.promotion = answers.promotion.value_or(core::PromotionVerdict{});
  if (status != nullptr) {
    in.memory = status->rollout;
    in.gates = core::GateVerdict(status->gates);
    in.kubernetes_step_started = status->phase == core::ClusterPhase::kUpgradingKubernetes &&
                                 !plan.steps.empty() &&
                                 plan.steps.front().type == core::StepType::kKubernetes;
  }
  return core::OutlookOf(in);
}

struct PlanInputs {
  const core::ProfileSet& set;
  const core::ObservedFleet& fleet;
  const Unobserved& unobserved;
  const Unresolved& unresolved;
  // Empty when no status checkout was given.
  const std::map<std::string, core::ClusterStatus>& statuses;
  bool status_known = false;
  bool kubernetes_upgrades = true;
  core::TimePoint now;
  // Where the nodes of a cluster the plan upgrades Kubernetes on keep its settings; null when
  // the nodes are not asked (an observed-state file).
  ConfigSurvey survey = nullptr;
  // What the plan's drains will meet; null as `survey`.
  DrainSurvey drains = nullptr;
  // The recorded statuses whose node durations give the forecast its ranges; null: none.
  const std::map<std::string, core::ClusterStatus>* history = nullptr;
};

core::PlanReportEntry PlanOne(const core::ClusterProfile& profile, const PlanInputs& in) {
  core::PlanReportEntry entry{profile.name, std::nullopt, {}, std::nullopt, {}};
  const core::ObservedCluster* observed = in.fleet.FindCluster(profile.name);
  core::ObservedCluster empty{profile.name, {}, ""};
  entry.plan = core::PlanCluster(profile, observed ? *observed : empty, in.set.support_matrix,
                                 in.set.release_catalog);
  entry.nodes = NodesOf(profile, observed);
  if (!observed) {
    entry.plan->status = core::PlanStatus::kBlocked;
    auto why = in.unobserved.find(profile.name);
    entry.plan->message = why != in.unobserved.end()
                              ? "cannot observe the nodes: " + why->second
                              : "cluster " + profile.name + " was not observed";
  }
  // A broken target says so, not what its factory no longer lists for it.
  if (auto why = in.unresolved.find(profile.name);
      why != in.unresolved.end() && !in.set.release_catalog.IsTalosBroken(profile.talos_version)) {
    entry.plan->status = core::PlanStatus::kBlocked;
    entry.plan->message = why->second;
  }
  if (profile.talos_factory) {
    entry.schematic = core::PlanSchematic{profile.talos_schematic_id,
                                          profile.talos_factory->schematic.official_extensions};
  }
  auto own = in.statuses.find(profile.name);
  const core::ClusterStatus* status = own != in.statuses.end() ? &own->second : nullptr;
  const core::StartCheckAnswers answers = AnswersOf(profile, *entry.plan, in.statuses, in.now);
  if (in.status_known) entry.plan->gates = core::PlanGates(profile, *entry.plan, &answers);
  entry.outlook = Outlook(profile, *entry.plan, observed ? *observed : empty, in.status_known,
                          status, answers, in.kubernetes_upgrades, in.now);
  if (in.survey && observed && core::HasKubernetesStep(*entry.plan)) {
    entry.kubernetes_config = in.survey(profile.name, *observed);
  }
  if (in.drains && observed) entry.drain_forecast = in.drains(profile, *entry.plan);
  if (entry.drain_forecast && in.history != nullptr) {
    auto recorded = in.history->find(profile.name);
    if (recorded != in.history->end()) {
      core::AddDurations(*entry.drain_forecast, *entry.plan, profile, recorded->second);
    }
  }
  return entry;
}

std::vector<core::PlanReportEntry> PlanAll(const PlanInputs& in) {
  std::vector<core::PlanReportEntry> entries;
  for (const core::ClusterProfile& profile : in.set.profiles) {
    entries.push_back(PlanOne(profile, in));
  }
  for (const core::InvalidProfile& invalid : in.set.invalid) {
    entries.push_back({invalid.cluster, std::nullopt, invalid.diagnostics, std::nullopt, {}});
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.cluster < b.cluster; });
  return entries;
}

int ExitCode(const core::ProfileSet& set, const std::vector<core::PlanReportEntry>& entries) {
  if (!set.defaults_diagnostics.empty()) return kExitInvalid;
  for (const core::PlanReportEntry& e : entries) {
    if (!e.plan) return kExitInvalid;
  }
  for (const core::PlanReportEntry& e : entries) {
    if (e.plan->status == core::PlanStatus::kBlocked && !core::FollowsNodesInFlight(e)) {
      return kExitBlocked;
    }
    if (core::KubernetesConfigRefused(e)) return kExitBlocked;
  }
  return kExitOk;
}

}  // namespace

std::optional<core::ProfileSet> LoadCheckout(const std::filesystem::path& dir, int shards,
                                             std::ostream& err) {
  return LoadProfiles(dir, shards, err);
}

std::optional<core::ObservedFleet> ObserveFleet(const core::ProfileSet& set,
                                                const PlanOptions& options, Env& env,
                                                std::map<std::string, std::string>& unobserved,
                                                std::ostream& err) {
  std::unique_ptr<TalosconfigClientFactory> clients =
      ObservesLive(options) ? LiveClients(options, env) : nullptr;
  return ObserveThrough(clients.get(), set, options, unobserved, err);
}

int RunPlan(const PlanOptions& options, Env& env, std::ostream& out, std::ostream& err) {
  std::optional<core::ProfileSet> set = LoadProfiles(options.dir, options.shards, err);
  if (!set) return kExitInvalid;
  for (const core::Diagnostic& d : set->defaults_diagnostics) err << d.ToString() << "\n";
  std::optional<std::map<std::string, core::ClusterStatus>> statuses =
      LoadStatuses(options.status_dir, *set, err);
  if (!statuses) return kExitInvalid;
  // The releases the schematic profiles' factories mark broken block as in the daemon.
  for (const std::string& e : factory::MarkBrokenReleases(
           options.image_factory, FactoryOrigins(set->profiles, options.image_factory.origin),
           set->release_catalog, env)) {
    err << "warning: " << e << "\n";
  }
  // One run asks each factory once per schematic: the IDs are kept in memory only.
  factory::FactoryInstallers installers(options.image_factory, "", "pass --image-factory URL");
  const Unresolved unresolved =
      ResolveSchematics(installers.resolver(), set->profiles, nullptr, *statuses);
  Unobserved unobserved;
  std::unique_ptr<TalosconfigClientFactory> clients =
      ObservesLive(options) ? LiveClients(options, env) : nullptr;
  std::optional<core::ObservedFleet> fleet =
      ObserveThrough(clients.get(), *set, options, unobserved, err);
  if (!fleet) return kExitInvalid;
  const std::vector<core::PlanReportEntry> entries = PlanAll(
      {*set, *fleet, unobserved, unresolved, *statuses, !options.status_dir.empty(),
       options.kubernetes_upgrades, env.Now(), clients ? SurveyThrough(*clients, *set) : nullptr,
       clients ? DrainSurveyThrough(*clients, *set) : nullptr, &*statuses});
  switch (options.format) {
    case PlanFormat::kText:
      out << core::RenderPlanText(entries);
      break;
    case PlanFormat::kMarkdown:
      out << core::RenderPlanMarkdown(entries);
      break;
    case PlanFormat::kJson:
      out << core::RenderPlanReport(entries, core::ReportFormat::kJson);
      break;
    case PlanFormat::kYaml:
      out << core::RenderPlanReport(entries, core::ReportFormat::kYaml);
      break;
  }
  return ExitCode(*set, entries);
}

PlanPreview PreviewPlan(const std::vector<core::SourceFile>& proposed,
                        const std::vector<core::SourceFile>& trusted,
                        const TalosCredentials& credentials, const std::string& self_node, Env& env,
                        bool kubernetes_upgrades, int shards,
                        factory::FactoryInstallers* installers,
                        const std::vector<core::Version>& broken,
                        const std::map<std::string, core::ClusterStatus>* history) {
  PlanPreview preview;
  core::ProfileSet set = DecodeProfiles(proposed, shards);
  for (const core::Version& v : broken) set.release_catalog.MarkTalosBroken(v);
  const core::ProfileSet base = DecodeProfiles(trusted, shards);
  std::map<std::string, std::string> before;
  for (const core::SourceFile& f : trusted) before[f.path] = f.content;
  bool all_changed = false;
  std::set<std::string> changed_files;
  for (const core::SourceFile& f : proposed) {
    auto it = before.find(f.path);
    if (it != before.end() && it->second == f.content) continue;
    changed_files.insert(f.path);
    if (!f.path.starts_with("clusters/")) all_changed = true;
  }
  auto changed = [&](const std::string& file) {
    return all_changed || changed_files.contains(file);
  };
  // Only the clusters the plan shows are resolved, each at the watched branch's factory, within
  // the preview's factory budget, and what the factory answers is kept for this preview only.
  UseTrustedFactories(base, set.profiles);
  Unresolved unresolved;
  if (installers != nullptr) {
    factory::PreviewInstallers scoped(*installers, factory::kPreviewFactoryRequests);
    std::vector<core::ClusterProfile> wanted;
    for (const core::ClusterProfile& p : set.profiles) {
      if (changed(p.file)) wanted.push_back(p);
    }
    if (absl::Status admitted = scoped.Admit(wanted); !admitted.ok()) {
      preview.refused = admitted;
      preview.markdown = absl::StrCat("Not planned: ", admitted.message(), "\n");
      preview.exit_code = kExitBlocked;
      return preview;
    }
    unresolved = ResolveSchematics(scoped.resolver(), set.profiles,
                                   [&](const core::ClusterProfile& p) { return changed(p.file); });
  }
  // Observed through the trusted profiles only: the proposal's endpoints are never dialled;
  // and only the clusters the change touches, so a one-line change costs one cluster's calls.
  std::set<std::string> touched;
  for (const core::ClusterProfile& p : set.profiles) {
    if (changed(p.file)) touched.insert(p.name);
  }
  core::ProfileSet observed_set = base;
  std::erase_if(observed_set.profiles,
                [&](const core::ClusterProfile& p) { return !touched.contains(p.name); });
  TalosconfigClientFactory clients(credentials, {}, env);
  TalosFleetObserver observer(clients, self_node);
  std::stringstream observe_errors;
  Unobserved unobserved;
  const core::ObservedFleet fleet = ObserveWith(observer, observed_set, unobserved, observe_errors);
  std::vector<core::PlanReportEntry> entries;
  const std::map<std::string, core::ClusterStatus> no_statuses;
  // The nodes are asked at the watched branch's endpoints, as they were observed.
  for (core::PlanReportEntry& entry :
       PlanAll({set, fleet, unobserved, unresolved, no_statuses, false, kubernetes_upgrades,
                env.Now(), SurveyThrough(clients, base), DrainSurveyThrough(clients, base),
                history})) {
    std::string file = "clusters/" + entry.cluster + ".yaml";
    for (const core::ClusterProfile& profile : set.profiles) {
      if (profile.name == entry.cluster) file = profile.file;
    }
    for (const core::InvalidProfile& invalid : set.invalid) {
      if (invalid.cluster == entry.cluster) file = invalid.file;
    }
    if (!changed(file)) continue;
    preview.changed.push_back(entry.cluster);
    entries.push_back(std::move(entry));
  }
  for (std::string line; std::getline(observe_errors, line);) preview.unobserved.push_back(line);
  if (entries.empty() && set.defaults_diagnostics.empty()) return preview;
  preview.markdown = core::RenderPlanMarkdown(entries);
  preview.exit_code = ExitCode(set, entries);
  return preview;
}

}  // namespace tr::reconciler
