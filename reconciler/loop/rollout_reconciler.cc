#include "reconciler/loop/rollout_reconciler.h"

#include <algorithm>
#include <utility>

#include "core/plan_outlook.h"
#include "core/planner.h"
#include "core/promotion.h"
#include "core/rollout_outcomes.h"
#include "core/rollout_record.h"
#include "core/status_yaml.h"
#include "fmt/format.h"
#include "reconciler/operations/background_steps.h"
#include "reconciler/operations/error_class.h"
#include "reconciler/operations/k8s_upgrade/rollout_step.h"
#include "reconciler/runtime/logging.h"
#include "reconciler/runtime/windows.h"

namespace tr::reconciler {
namespace {

std::string Text(const absl::Status& s) { return std::string(s.message()); }

// Actions worth a line in the status history.
bool Notable(core::ActionKind kind) {
  using core::ActionKind;
  return kind == ActionKind::kStartNode || kind == ActionKind::kCompleteNode ||
         kind == ActionKind::kFailNode || kind == ActionKind::kRollbackNode ||
         kind == ActionKind::kSnapshotEtcd;
}

}  // namespace

struct RolloutReconciler::Pass {
  std::shared_ptr<const DesiredSnapshot> desired;
  core::ReleaseCatalog catalog;  // the desired state's, with the registry's releases added
  const core::ClusterProfile* profile = nullptr;
  // The profile with its Image Factory installer filled in, when it names a schematic.
  std::optional<core::ClusterProfile> resolved;
  std::optional<core::ClusterStatus> previous;
  core::RolloutMemory memory;
  std::vector<std::string> events;
  std::shared_ptr<spdlog::logger> log;
  std::optional<core::ProposalRef> proposal;  // the release proposal concerning the cluster
  core::GateState gates;                      // the health checks' last answers
  bool gates_fresh = false;                   // checked in this pass since the last node completed
  // spec.promotion: the upstream clusters' status, read once per pass when a step is planned.
  std::optional<std::map<std::string, core::ClusterStatus>> upstream;

  // Runs the health checks when `d` would start a node or a Kubernetes step not yet
  // `kubernetes_started`, once per pass until a node completes; true when it ran them. A
  // rollout that stopped otherwise (paused, blocked, failed, done) ends the gate wait, so a
  // later one starts its gateTimeout afresh.
  bool CheckGates(gates::HealthGateRunner* runner, const core::RolloutDecision& d,
                  bool kubernetes_started, core::TimePoint now, std::stop_token stop) {
    using core::ActionKind;
    const bool starts = d.kind == ActionKind::kPrePullImage ||
                        d.kind == ActionKind::kSnapshotEtcd || d.kind == ActionKind::kStartNode ||
                        (d.kind == ActionKind::kStartKubernetesUpgrade && !kubernetes_started);
    if (!starts) {
      if (d.phase != core::ClusterPhase::kWaitingForGate &&
          d.phase != core::ClusterPhase::kUpgradingTalos) {
        gates.failing_since.reset();
      }
      return false;
    }
    if (runner == nullptr || gates_fresh || profile->policy.health_checks.empty()) return false;
    gates = core::UpdateGateState(gates, runner->Check(*profile, stop), now);
    gates_fresh = true;
    for (const core::GateResult& r : gates.results) {
      log->info("gate={} healthy={} answer={}", LogValue(r.name), r.healthy, LogValue(r.message));
    }
    return true;
  }

  core::ClusterStatus Status(const core::ClusterPlan* plan, const core::ObservedCluster* observed,
                             const core::RolloutDecision* decision, core::TimePoint now) const {
    core::StatusInput in;
    in.cluster = profile->name;
    in.previous = previous ? &*previous : nullptr;
    in.profile = profile;
    in.plan = plan;
    in.observed = observed;
    in.decision = decision;
    in.memory = memory;
    in.gates = gates;
    in.catalog = &catalog;
    in.desired_commit = desired->commit;
    in.events = events;
    in.now = now;
    in.proposal = proposal;
    return core::BuildClusterStatus(in);
  }
};

RolloutReconciler::RolloutReconciler(Deps deps, RolloutReconcilerOptions options,
                                     std::map<std::string, core::ClusterStatus> recorded)
    : deps_(deps), options_(options), recorded_(std::move(recorded)) {
  // No phase series yet: a status file is read before the profiles, and one of a cluster that
  // has none (planted on the status branch) must not become a series. A cluster's first
  // reconcile records, which sets its phase.
}

std::optional<core::ClusterStatus> RolloutReconciler::LastStatus(const std::string& c) const {
  MutexLock lock(mu_);
  auto it = recorded_.find(c);
  if (it == recorded_.end()) return std::nullopt;
  return it->second;
}

bool RolloutReconciler::OperationInFlight(const std::string& cluster) const {
  MutexLock lock(mu_);
  auto it = recorded_.find(cluster);
  return it != recorded_.end() && !it->second.rollout.in_flight.empty();
}

void RolloutReconciler::Adopt(const std::string& cluster,
                              std::optional<core::ClusterStatus> recorded) {
  MutexLock lock(mu_);
  recorded_content_.erase(cluster);
  // Another replica may have moved the nodes on since this one last looked (before a freeze):
  // the next look is a full one, so no record reports a node as that old look saw it.
  last_observed_.erase(cluster);
  if (recorded) {
    recorded_[cluster] = *std::move(recorded);
  } else {
    recorded_.erase(cluster);
  }
}

absl::Status RolloutReconciler::Record(const core::ClusterStatus& status, std::stop_token stop,
                                      News news) {
  deps_.metrics.cluster_phase.Set(status.cluster, core::ClusterPhaseName(status.phase));
  // Most looks at a cluster change nothing: told apart field by field first, which costs a
  // copy, not the rendering of a status (a tenth of the daemon's CPU in a fleet rollout).
  {
    MutexLock lock(mu_);
    auto found = recorded_.find(status.cluster);
    if (found != recorded_.end() && core::SameContent(found->second, status)) {
      return absl::OkStatus();
    }
  }
  std::string content = core::StatusContentYaml(status);
  std::optional<core::ClusterStatus> last;
  {
    MutexLock lock(mu_);
    auto found = recorded_.find(status.cluster);
    if (found != recorded_.end()) {
      last = found->second;
      auto text = recorded_content_.find(status.cluster);
      if (text == recorded_content_.end()) {  // recorded by another process or replica
        text =
            recorded_content_.emplace(status.cluster, core::StatusContentYaml(found->second)).first;
      }
      if (text->second == content) return absl::OkStatus();
    }
  }
  // News alone (a node rebooting, back, its progress) does not wait for its push: nothing a
  // restart resumes from changed, and between two nodes it was a push on the critical path.
  const bool news_only =
      news == News::kYes || (last && core::OnlyReportDiffers(*last, status)) ||
      (news == News::kIfMemoryUnchanged &&
       status.rollout == (last ? last->rollout : core::RolloutMemory{}));
  if (absl::Status s =
          news_only ? deps_.store.RecordSoon(status, stop) : deps_.store.Record(status, stop);
      !s.ok()) {
    if (!absl::IsCancelled(s)) {
      deps_.metrics.status_record_failures.Inc();
      ModuleLogger("rollout")->warn("step=record error={}", LogValue(Text(s)));
    }
    return s;
  }
  deps_.metrics.status_commits.Inc();
  // What the status branch now says, at the info level: a cluster that is Ready or waits for
  // its window is otherwise silent there.
  if (!last || last->phase != status.phase || last->message != status.message) {
    ModuleLogger("rollout")->info("step=record phase={} message={}",
                                  core::ClusterPhaseName(status.phase), LogValue(status.message));
  }
  MutexLock lock(mu_);
  recorded_[status.cluster] = status;
  recorded_content_[status.cluster] = std::move(content);
  return absl::OkStatus();
}

ReconcileOutcome RolloutReconciler::Reconcile(const std::string& cluster, std::stop_token stop) {
  ReconcileOutcome outcome = ReconcileCluster(cluster, stop);
  using Kind = ReconcileOutcome::Kind;
  static const std::map<Kind, const char*> kNames = {{Kind::kDone, "done"},
                                                     {Kind::kRequeueAfter, "requeue"},
                                                     {Kind::kTransientError, "transient_error"},
                                                     {Kind::kStalled, "stalled"},
                                                     {Kind::kForget, "forget"}};
  deps_.metrics.reconciles.Inc(kNames.at(outcome.kind));
  if (outcome.kind == Kind::kForget) {
    deps_.metrics.cluster_phase.Forget(cluster);
    deps_.metrics.client_certificate_expiry.Erase(cluster);
    if (deps_.in_flight_follower != nullptr) deps_.in_flight_follower->Forget(cluster);
  }
  return outcome;
}

ReconcileOutcome RolloutReconciler::ReconcileCluster(const std::string& cluster,
                                                     std::stop_token stop) {
  Pass pass;
  pass.desired = deps_.desired.Current();
  pass.log = ModuleLogger("rollout");
  if (!pass.desired) return ReconcileOutcome::TransientError("no desired state read yet");
  pass.catalog = pass.desired->profiles.release_catalog;
  if (deps_.proposal_of) pass.proposal = deps_.proposal_of(cluster);
  if (deps_.installer_releases != nullptr) {
    for (const core::Version& v : deps_.installer_releases->Known()) pass.catalog.AddTalos(v);
    // A release marked broken blocks the plan before the next node that would get it.
    for (const core::Version& v : deps_.installer_releases->Broken()) {
      pass.catalog.MarkTalosBroken(v);
    }
  }
  for (const core::InvalidProfile& invalid : pass.desired->profiles.invalid) {
    if (invalid.cluster == cluster) {
      return ReconcileInvalid(cluster, invalid.diagnostics, pass.desired->commit, stop);
    }
  }
  if (!pass.desired->profiles.defaults_diagnostics.empty()) {
    return ReconcileInvalid(cluster, pass.desired->profiles.defaults_diagnostics,
                            pass.desired->commit, stop);
  }
  for (const core::ClusterProfile& profile : pass.desired->profiles.profiles) {
    if (profile.name == cluster) pass.profile = &profile;
  }
  if (pass.profile == nullptr) return ReconcileOutcome::Forget();
  pass.previous = LastStatus(cluster);
  if (pass.previous) pass.memory = pass.previous->rollout;
  if (pass.previous) pass.gates = pass.previous->gates;
  if (pass.profile->talos_factory && deps_.installers != nullptr) {
    absl::StatusOr<core::ClusterProfile> resolved =
        deps_.installers->Resolve(*pass.profile, pass.memory.in_flight.empty());
    if (!resolved.ok()) return InstallerUnknown(pass, resolved.status(), stop);
    pass.resolved = *std::move(resolved);
    pass.profile = &*pass.resolved;
  }
  // After resolution: a failure halts the schematic it happened on, whose ID only the
  // factory gives.
  if (!core::HaltedByFailure(pass.memory, *pass.profile)) {
    pass.memory.failure.reset();
  }
  ReconcileOutcome outcome = ReconcileProfile(pass, stop);
  if (deps_.in_flight_follower != nullptr) {
    std::vector<std::string> nodes;
    for (const core::OperationInFlight& op : pass.memory.in_flight) nodes.push_back(op.node);
    deps_.in_flight_follower->Follow(*pass.profile, nodes);
  }
  return outcome;
}

ReconcileOutcome RolloutReconciler::InstallerUnknown(Pass& pass, const absl::Status& error,
                                                     std::stop_token stop) {
  pass.log->warn("step=resolve-installer error={}", LogValue(Text(error)));
  // Blocked, and tried again with the backoff of a transient error: a factory that is down
  // comes back, and an extension missing for a release may be published later.
  core::RolloutDecision blocked;
  blocked.phase = core::ClusterPhase::kBlocked;
  blocked.message = Text(error);
  if (absl::Status s = Record(pass.Status(nullptr, nullptr, &blocked, deps_.env.Now()), stop);
      !s.ok()) {
    return ReconcileOutcome::TransientError(Text(s));
  }
  return ReconcileOutcome::TransientError(blocked.message);
}

ReconcileOutcome RolloutReconciler::ReconcileInvalid(const std::string& cluster,
                                                     const core::Diagnostics& problems,
                                                     const std::string& commit,
                                                     std::stop_token stop) {
  std::optional<core::ClusterStatus> previous = LastStatus(cluster);
  core::StatusInput in;
  in.cluster = cluster;
  in.previous = previous ? &*previous : nullptr;
  in.invalid = &problems;
  in.desired_commit = commit;
  in.now = deps_.env.Now();
  core::ClusterStatus status = core::BuildClusterStatus(in);
  ModuleLogger("rollout")->warn("phase=Blocked reason=invalid-profile error={}",
                                LogValue(status.message));
  if (absl::Status s = Record(status, stop); !s.ok()) {
    return ReconcileOutcome::TransientError(Text(s));
  }
  return ReconcileOutcome::Stalled(status.message);
}

ReconcileOutcome RolloutReconciler::ObservationFailed(Pass& pass, const absl::Status& error,
                                                      std::stop_token stop) {
  const ErrorClass error_class = ClassifyError(error, ErrorSource::kObserve);
  pass.log->warn("step=observe class={} error={}", ErrorClassName(error_class),
                 LogValue(Text(error)));
  if (error_class != ErrorClass::kStall) return ReconcileOutcome::TransientError(Text(error));
  // Credentials or permissions: nothing changes until someone fixes them.
  core::RolloutDecision blocked;
  blocked.phase = core::ClusterPhase::kBlocked;
  blocked.message = "cannot observe the nodes: " + Text(error);
  if (absl::Status s = Record(pass.Status(nullptr, nullptr, &blocked, deps_.env.Now()), stop);
      !s.ok()) {
    return ReconcileOutcome::TransientError(Text(s));
  }
  return ReconcileOutcome::Stalled(blocked.message);
}

core::RolloutDecision RolloutReconciler::Decide(const Pass& pass, const core::ClusterPlan& plan,
                                                const core::ObservedCluster& observed,
                                                core::TimePoint now) const {
  const core::ClusterProfile& profile = *pass.profile;
  core::RolloutInput input{
      profile, plan, observed, pass.memory, EvaluateWindows(profile.policy.windows, now), {}, now};
  input.poll_interval = std::chrono::duration_cast<std::chrono::seconds>(
      std::max(options_.node_poll_interval, std::chrono::milliseconds(1000)));
  input.in_flight_heard = InFlightHeard(pass);
  // Only answers taken in this pass hold a node; older ones are checked again first.
  if (pass.gates_fresh) input.extra_gates = core::GateVerdict(pass.gates);
  if (profile.promotion) {
    const std::map<std::string, core::ClusterStatus> none;
    input.promotion = core::EvaluatePromotion(profile, plan, pass.memory,
                                              pass.upstream ? *pass.upstream : none, now);
  }
  input.kubernetes_step_started = KubernetesStepStarted(profile.name, plan);
  return core::DecideNextAction(input);
}

std::map<std::string, core::ClusterStatus> RolloutReconciler::UpstreamStatus(
    const core::ClusterProfile& profile, std::stop_token stop) {
  std::map<std::string, core::ClusterStatus> branch;
  if (deps_.peers != nullptr) {
    absl::StatusOr<std::map<std::string, core::ClusterStatus>> read = deps_.peers->LoadAll(stop);
    if (read.ok()) {
      branch = *std::move(read);
    } else {
      ModuleLogger("rollout")->warn(
          "cluster={} step=read-upstream-status error=\"{}\"; using this process's records",
          profile.name, Text(read.status()));
    }
  }
  std::map<std::string, core::ClusterStatus> upstream;
  for (const core::Promotion::After& a : profile.promotion->after) {
    std::optional<core::ClusterStatus> mine = LastStatus(a.cluster);
    auto it = branch.find(a.cluster);
    if (it != branch.end() && (!mine || it->second.updated >= mine->updated)) {
      upstream.emplace(a.cluster, std::move(it->second));
    } else if (mine) {
      upstream.emplace(a.cluster, *std::move(mine));
    }
  }
  return upstream;
}

bool RolloutReconciler::KubernetesStepStarted(const std::string& cluster,
                                              const core::ClusterPlan& plan) const {
  return kubernetes_upgrades_ != nullptr && !plan.steps.empty() &&
         plan.steps.front().type == core::StepType::kKubernetes &&
         kubernetes_upgrades_->Started(cluster, plan.steps.front().to);
}

RolloutReconciler::Verdict RolloutReconciler::HandOver(Pass& pass, Turn& turn, std::stop_token) {
  const core::ClusterPlan& plan = turn.look.plan;
  const core::TimePoint now = turn.look.now;
  core::RolloutDecision& decision = turn.decision;
  if (decision.kind == core::ActionKind::kStartKubernetesUpgrade && kubernetes_upgrades_ &&
      !options_.dry_run) {
    k8s_upgrade::FollowKubernetesUpgrade(*kubernetes_upgrades_, *pass.profile, plan,
                                         pass.desired->profiles.support_matrix, now,
                                         options_.node_poll_interval, decision);
  }
  if (decision.kind == core::ActionKind::kStartKubernetesUpgrade) {
    // Not run here (no runner, or a dry run): say so rather than claim an upgrade in progress;
    // `plan` words it the same way (core/plan_outlook.h).
    decision =
        core::KubernetesStepNotRun(decision, *pass.profile, plan.steps.front(),
                                   options_.dry_run ? "dry run" : "--kubernetes-upgrade-mode off");
  }
  if (options_.dry_run && Acts(decision)) decision = core::DryRun(decision);
  return Verdict::Next();
}

RolloutReconciler::Verdict RolloutReconciler::RestUnlessActing(Pass&, Turn& turn, std::stop_token) {
  return Acts(turn.decision) && !options_.dry_run ? Verdict::Next() : Verdict::RestNow();
}

RolloutReconciler::Verdict RolloutReconciler::ConsultGates(Pass& pass, Turn& turn,
                                                           std::stop_token stop) {
  const Look& look = turn.look;
  if (pass.CheckGates(deps_.gates, turn.decision,
                      KubernetesStepStarted(pass.profile->name, look.plan), look.now, stop)) {
    turn.decision = Decide(pass, look.plan, look.observed, look.now);
  }
  return Verdict::Next();
}

bool RolloutReconciler::Acts(const core::RolloutDecision& decision) {
  return decision.kind != core::ActionKind::kNone &&
         decision.kind != core::ActionKind::kStartKubernetesUpgrade;
}

ReconcileOutcome RolloutReconciler::Rest(Pass& pass, const Turn& turn, bool results_waited,
                                         std::stop_token stop) {
  const core::RolloutDecision& decision = turn.decision;
  const core::TimePoint now = turn.look.now;
  pass.log->debug("phase={} decision=none message={}", core::ClusterPhaseName(decision.phase),
                  LogValue(decision.message));
  // A pre-pull or an etcd snapshot running in the background is taken again after a restart:
  // that it runs is news, which goes out with the next record (a node's start) when the step
  // is quick, and on its own after a moment when it is not. So are the results that waited
  // for the next record (core::RecordMayWaitForNext), which are all the memory gained since
  // the last one: a crash that loses them only repeats them. A step that has finished but
  // whose result is not yet taken counts as running: a restart takes it again too, and how
  // quickly its thread ran must not decide what waits.
  const std::optional<OutstandingStep> step = deps_.executor.Outstanding(pass.profile->name);
  const bool repeatable_step_runs = step && step->node.empty();
  const News news = !repeatable_step_runs ? News::kNo
                    : results_waited      ? News::kYes
                                          : News::kIfMemoryUnchanged;
  if (absl::Status s =
          Record(pass.Status(&turn.look.plan, &turn.look.observed, &decision, now), stop, news);
      !s.ok()) {
    return ReconcileOutcome::TransientError(Text(s));
  }
  if (!decision.wait_until) return ReconcileOutcome::Done();
  const auto wait =
      std::max(std::chrono::milliseconds(0),
               std::chrono::duration_cast<std::chrono::milliseconds>(*decision.wait_until - now));
  // A node in flight is looked at on the node poll interval, not the rollout's seconds; a
  // settle time with none in flight is waited out.
  const bool settling = pass.memory.in_flight.empty() && pass.memory.settle_until &&
                        *decision.wait_until == *pass.memory.settle_until;
  const bool poll = decision.phase == core::ClusterPhase::kUpgradingTalos && !settling;
  return ReconcileOutcome::RequeueAfter(poll ? std::min(wait, NodePoll(pass)) : wait);
}

bool RolloutReconciler::InFlightHeard(const Pass& pass) const {
  std::vector<std::string> nodes;
  for (const core::OperationInFlight& op : pass.memory.in_flight) nodes.push_back(op.node);
  return deps_.in_flight_follower != nullptr &&
         deps_.in_flight_follower->Hearing(pass.profile->name, nodes);
}

std::chrono::milliseconds RolloutReconciler::NodePoll(const Pass& pass) const {
  // While every node in flight is heard, what ends its wait (or fails it) and its stream
  // breaking wake the cluster: the poll is then only there for a wake lost, and a look costs
  // two to four Talos calls a node. Most of an upgrade is spent so.
  return options_.node_poll_interval * (InFlightHeard(pass) ? core::kHeardPollFactor : 1);
}

RolloutReconciler::Verdict RolloutReconciler::Act(Pass& pass, Turn& turn, std::stop_token stop) {
  const core::ClusterProfile& profile = *pass.profile;
  core::RolloutDecision& decision = turn.decision;
  const core::TimePoint now = turn.look.now;
  const std::optional<OutstandingStep> outstanding = deps_.executor.Outstanding(profile.name);
  const bool collecting = outstanding && outstanding->Is(decision);
  // A background step's line is written when it starts and when it ends, not at every look.
  pass.log->log(collecting ? spdlog::level::debug : spdlog::level::info,
                "phase={} action={} node={} progress={} message={}",
                core::ClusterPhaseName(decision.phase), core::ActionKindName(decision.kind),
                LogValue(decision.node), LogValue(decision.progress.ToString()),
                LogValue(decision.message));
  // Starting a node and recording a failure only change what is recorded.
  if (decision.kind == core::ActionKind::kStartNode ||
      decision.kind == core::ActionKind::kFailNode) {
    return Verdict::Next();
  }
  absl::StatusOr<ActionResult> result = deps_.executor.Execute(profile, decision, stop);
  if (result.ok() && result->in_progress) {
    decision = core::StillRunning(decision, "", now + options_.node_poll_interval);
    return Verdict::RestNow();
  }
  if (result.ok()) {
    turn.actor_id = result->actor_id;
    if (!result->detail.empty() || BackgroundSteps::RunsInBackground(decision.kind)) {
      pass.log->info("action={} node={} result={}", core::ActionKindName(decision.kind),
                     LogValue(decision.node),
                     LogValue(result->detail.empty() ? "done" : result->detail));
    }
    return Verdict::Next();
  }
  const ErrorClass error_class = ClassifyError(result.status(), ErrorSource::kAct);
  pass.log->log(error_class == ErrorClass::kHalt ? spdlog::level::err : spdlog::level::warn,
                "action={} node={} class={} error={}", core::ActionKindName(decision.kind),
                LogValue(decision.node), ErrorClassName(error_class),
                LogValue(Text(result.status())));
  switch (error_class) {
    case ErrorClass::kBusy:
      decision = core::StillRunning(decision, "the node reports one already in progress",
                                    now + options_.node_poll_interval);
      return Verdict::RestNow();
    case ErrorClass::kRetry:
    case ErrorClass::kStall:
      return Verdict::End(ReconcileOutcome::TransientError(Text(result.status())));
    case ErrorClass::kHalt:
      break;
  }
  decision = core::ActionRefused(decision, profile, Text(result.status()), now);
  return Verdict::Next();
}

RolloutReconciler::Verdict RolloutReconciler::WaitForRunningStep(Pass& pass, Turn& turn,
                                                                 std::stop_token) {
  core::RolloutDecision& decision = turn.decision;
  // A dry run starts nothing in the background; recording a failure does not act, and halts
  // the cluster.
  if (options_.dry_run || !Acts(decision) || decision.kind == core::ActionKind::kFailNode) {
    return Verdict::Next();
  }
  const std::optional<OutstandingStep> step = deps_.executor.Outstanding(pass.profile->name);
  if (!step || step->done || step->Is(decision)) return Verdict::Next();
  decision = core::HeldByRunningStep(decision, step->kind, step->node,
                                     turn.look.now + options_.node_poll_interval);
  return Verdict::RestNow();
}

void RolloutReconciler::Count(const core::RolloutDecision& decision,
                              const core::RolloutMemory& memory, core::TimePoint now) {
  using core::ActionKind;
  if (decision.kind == ActionKind::kStartNode) deps_.metrics.node_upgrades_started.Inc();
  const char* result = decision.kind == ActionKind::kCompleteNode   ? "completed"
                       : decision.kind == ActionKind::kFailNode     ? "failed"
                       : decision.kind == ActionKind::kRollbackNode ? "rolled_back"
                                                                    : nullptr;
  if (result == nullptr) return;
  deps_.metrics.node_upgrades.Inc(result);
  for (const core::OperationInFlight& op : memory.in_flight) {
    if (op.node == decision.node) {
      deps_.metrics.node_upgrade_duration.Observe(result, now - op.started);
    }
  }
}

absl::StatusOr<core::ObservedCluster> RolloutReconciler::ObserveStep(const Pass& pass,
                                                                     bool follow_in_flight) {
  const core::ClusterProfile& profile = *pass.profile;
  std::optional<core::ObservedCluster> last;
  if (follow_in_flight) {
    MutexLock lock(mu_);
    if (auto it = last_observed_.find(profile.name); it != last_observed_.end()) last = it->second;
  }
  // A profile whose nodes changed since that look is looked at whole.
  if (last && (last->nodes.size() != profile.nodes.size() ||
               !std::all_of(profile.nodes.begin(), profile.nodes.end(),
                            [&](const core::NodeSpec& n) { return last->FindNode(n.name); }))) {
    last.reset();
  }
  if (!last) {
    absl::StatusOr<core::ObservedCluster> full = deps_.observer.Observe(profile);
    if (full.ok()) {
      MutexLock lock(mu_);
      last_observed_[profile.name] = *full;
    }
    return full;
  }
  std::vector<std::string> nodes;
  for (const core::OperationInFlight& op : pass.memory.in_flight) nodes.push_back(op.node);
  absl::StatusOr<core::ObservedCluster> some = deps_.observer.ObserveNodes(profile, nodes);
  if (!some.ok()) return some;
  // The nodes in flight as they are now; every other node as the last full look saw it.
  for (core::NodeObservation& node : last->nodes) {
    if (const core::NodeObservation* seen = some->FindNode(node.name);
        seen && std::find(nodes.begin(), nodes.end(), node.name) != nodes.end()) {
      node = *seen;
    }
  }
  return *std::move(last);
}

bool RolloutReconciler::NoRoomBesideInFlight(const Pass& pass) {
  const core::RolloutMemory& memory = pass.memory;
  if (memory.in_flight.empty()) return false;
  for (const core::OperationInFlight& op : memory.in_flight) {
    for (const core::NodeSpec& n : pass.profile->nodes) {
      if (n.name == op.node && n.role == core::NodeRole::kControlPlane) return true;
    }
  }
  return static_cast<int>(memory.in_flight.size()) >= pass.profile->policy.max_parallel_workers;
}

bool RolloutReconciler::ObservationKeeps(core::ActionKind kind) {
  using core::ActionKind;
  return kind == ActionKind::kStartNode || kind == ActionKind::kPrePullImage ||
         kind == ActionKind::kSnapshotEtcd;
}

absl::StatusOr<RolloutReconciler::Look> RolloutReconciler::LookAt(
    Pass& pass, std::optional<core::ObservedCluster> kept, std::stop_token stop) {
  const core::ClusterProfile& profile = *pass.profile;
  // While no other node may start, only the nodes in flight can change what is decided:
  // follow them, not the whole cluster.
  absl::StatusOr<core::ObservedCluster> observed =
      kept ? *std::move(kept) : ObserveStep(pass, NoRoomBesideInFlight(pass));
  if (!observed.ok()) return observed.status();
  // Nodes that do not answer keep their last recorded versions in status and progress.
  Look look{
      core::WithLastKnownVersions(*std::move(observed), pass.previous ? &*pass.previous : nullptr),
      {},
      deps_.env.Now()};
  look.plan = core::PlanCluster(profile, look.observed, pass.desired->profiles.support_matrix,
                                pass.catalog);
  if (profile.promotion && !pass.upstream && look.plan.status == core::PlanStatus::kPlanned) {
    pass.upstream = UpstreamStatus(profile, stop);
  }
  return look;
}

core::ClusterStatus RolloutReconciler::Remember(Pass& pass, const Turn& turn) {
  const core::RolloutDecision& decision = turn.decision;
  const Look& look = turn.look;
  Count(decision, pass.memory, look.now);
  pass.memory =
      core::RecordAction(decision, pass.memory, pass.profile->policy, look.now, turn.actor_id);
  if (decision.kind == core::ActionKind::kCompleteNode) pass.gates_fresh = false;
  if (Notable(decision.kind)) pass.events.push_back(decision.message);
  pass.previous = pass.Status(&look.plan, &look.observed, &decision, look.now);
  // The history now holds them: a later status builds on it, recorded or not.
  pass.events.clear();
  return *pass.previous;
}

ReconcileOutcome RolloutReconciler::ReconcileProfile(Pass& pass, std::stop_token stop) {
  // A decision's sub-steps, in order, each handed what those before made of it. A step still
  // running in the background comes first, before the gates, which only matter when a node
  // may start.
  static constexpr SubStep kSubSteps[] = {
      &RolloutReconciler::WaitForRunningStep, &RolloutReconciler::ConsultGates,
      &RolloutReconciler::HandOver, &RolloutReconciler::RestUnlessActing, &RolloutReconciler::Act};
  // An observation no action since has changed, reused by the next decision.
  std::optional<core::ObservedCluster> kept;
  // A result whose record waits for the next one (core::RecordMayWaitForNext): a pre-pull, an
  // etcd snapshot or a completed node goes out with the next node's start (or the wait), in
  // one push. A crash in between only repeats that step.
  std::optional<core::ClusterStatus> unrecorded;
  // Pushes what waits, before the reconcile ends without a record of its own.
  auto push_waiting = [&]() -> absl::Status {
    if (!unrecorded) return absl::OkStatus();
    return Record(*std::exchange(unrecorded, std::nullopt), stop);
  };
  auto flush = [&](ReconcileOutcome outcome) {
    absl::Status s = push_waiting();
    return s.ok() ? std::move(outcome) : ReconcileOutcome::TransientError(Text(s));
  };
  for (int i = 0; i < options_.max_actions_per_reconcile && !stop.stop_requested(); ++i) {
    absl::StatusOr<Look> look = LookAt(pass, std::exchange(kept, std::nullopt), stop);
    if (!look.ok()) {
      // What waited goes out before the failure's own record, which stays the last.
      absl::Status s = push_waiting();
      return s.ok() ? ObservationFailed(pass, look.status(), stop)
                    : ReconcileOutcome::TransientError(Text(s));
    }
    Turn turn{*std::move(look), {}, ""};
    turn.decision = Decide(pass, turn.look.plan, turn.look.observed, turn.look.now);
    Verdict verdict;
    for (SubStep sub_step : kSubSteps) {
      verdict = (this->*sub_step)(pass, turn, stop);
      if (verdict.kind != Verdict::Kind::kNext) break;
    }
    // A rest records the memory as it is, with whatever waited.
    if (verdict.kind == Verdict::Kind::kRest) return Rest(pass, turn, unrecorded.has_value(), stop);
    if (verdict.kind == Verdict::Kind::kEnd) return flush(*std::move(verdict.outcome));
    core::ClusterStatus status = Remember(pass, turn);
    if (ObservationKeeps(turn.decision.kind)) kept = std::move(turn.look.observed);
    if (core::RecordMayWaitForNext(turn.decision.kind)) {
      unrecorded = std::move(status);
      continue;
    }
    unrecorded.reset();
    if (absl::Status s = Record(status, stop); !s.ok()) {
      return ReconcileOutcome::TransientError(Text(s));
    }
  }
  return flush(ReconcileOutcome::RequeueAfter(options_.node_poll_interval));
}

}  // namespace tr::reconciler
