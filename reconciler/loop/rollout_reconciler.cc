#include "reconciler/loop/rollout_reconciler.h"

#include <algorithm>
#include <utility>

#include "core/plan_outlook.h"
#include "core/planner.h"
#include "core/promotion.h"
#include "core/rollout_checks.h"
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

// The node is the profile's and has an operation in flight: its rollout will decide again.
bool NodeInFlight(const core::ClusterProfile& profile, const core::RolloutMemory& memory,
                  const std::string& node) {
  return std::any_of(profile.nodes.begin(), profile.nodes.end(),
                     [&](const core::NodeSpec& n) { return n.name == node; }) &&
         memory.InFlight(node);
}

}  // namespace

struct RolloutReconciler::Pass {
  // What one decision looks at: the nodes, the plan made from them, the time.
  struct Look {
    core::ObservedCluster observed;
    core::ClusterPlan plan;
    core::TimePoint now;
  };
  // A status to record, and how (RecordDue).
  struct Due {
    core::ClusterStatus status;
    News news = News::kNo;
    // The result that waited for the next record goes out first, as a record of its own (a
    // failure's record stays the last); otherwise this status holds it.
    bool after_waiting = false;
  };

  std::string cluster;
  std::shared_ptr<const DesiredSnapshot> desired;
  // The desired state's catalog, or `extended_catalog` when the registry knows releases: most
  // reconciles copy none.
  const core::ReleaseCatalog* catalog = nullptr;
  std::optional<core::ReleaseCatalog> extended_catalog;  // with the registry's releases added
  const core::ClusterProfile* profile = nullptr;
  // The profile with its Image Factory installer filled in, when it names a schematic.
  std::optional<core::ClusterProfile> resolved;
  std::shared_ptr<const core::ClusterStatus> previous;
  core::RolloutMemory memory;
  std::vector<std::string> events;
  std::shared_ptr<spdlog::logger> log;
  std::optional<core::ProposalRef> proposal;  // the release proposal concerning the cluster
  core::GateState gates;                      // the health checks' last answers
  bool gates_fresh = false;                   // checked in this pass since the last node completed
  // spec.promotion: the upstream clusters' status, read once per pass when a step is planned.
  std::optional<std::map<std::string, core::ClusterStatus>> upstream;
  bool turned = false;  // reached the turns: the profile is loaded and resolved

  // The turn under way: what it looks at, the decision (which a step may turn into another
  // one, through core's functions), and the executor's id of the action.
  Look look;
  core::RolloutDecision decision;
  std::string actor_id;
  // An observation no action since has changed, reused by the next turn.
  std::optional<core::ObservedCluster> kept;
  // The nodes the turn's look read from a live MachineStatus watch (NodeObservation::watched):
  // their watch's end and their readiness wake the cluster, so the follower leaves them out.
  std::vector<std::string> watched;
  // The plan ObserveWhole made of the look it returned (to tell whether etcd matters), taken
  // by Plan while the look holds nothing else: not made twice.
  std::optional<core::ClusterPlan> plan_ahead;
  // When the look the last turn decided on began (Env::Monotonic; ReconcileOutcome::looked_at).
  std::optional<Env::Instant> looked_at;
  // What this pass read of etcd since its last action that may change it (ActionTraits::
  // keeps_etcd): a control plane read in flight is not asked again by the look after its
  // completion, nor the member list.
  EtcdReadings etcd_read;

  // A result whose record waits for the next one (core::RecordMayWaitForNext): a pre-pull, an
  // etcd snapshot or a completed node goes out with the next node's start (or the wait), in
  // one push. A crash in between only repeats that step.
  std::optional<core::ClusterStatus> waiting;
  std::optional<Due> due;

  // Runs the health checks when `d` would start a node or a Kubernetes step not yet
  // `kubernetes_started`, once per pass until a node completes; true when it ran them. A
  // rollout that stopped otherwise (paused, blocked, failed, done) ends the gate wait, so a
  // later one starts its gateTimeout afresh.
  bool CheckGates(gates::HealthGateRunner* runner, const core::RolloutDecision& d,
                  bool kubernetes_started, core::TimePoint now, std::stop_token stop) {
    const core::ActionTraits& traits = core::TraitsOf(d.kind);
    if (!traits.gated || (traits.handed_over && kubernetes_started)) {
      gates = core::AfterDecisionStartingNothing(gates, d);
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
                             const core::RolloutDecision* decided, core::TimePoint now) const {
    core::StatusInput in;
    in.cluster = profile->name;
    in.previous = previous.get();
    in.profile = profile;
    in.plan = plan;
    in.observed = observed;
    in.decision = decided;
    in.memory = memory;
    in.gates = gates;
    in.catalog = catalog;
    in.desired_commit = desired->commit;
    in.events = events;
    in.now = now;
    in.proposal = proposal;
    return core::BuildClusterStatus(in);
  }
};

RolloutReconciler::RolloutReconciler(Deps deps, RolloutReconcilerOptions options,
                                     std::map<std::string, core::ClusterStatus> recorded)
    : deps_(deps), options_(options) {
  for (auto& [cluster, status] : recorded) {
    recorded_.emplace(cluster, std::make_shared<const core::ClusterStatus>(std::move(status)));
  }
  // No phase series yet: a status file is read before the profiles, and one of a cluster that
  // has none (planted on the status branch) must not become a series. A cluster's first
  // reconcile records, which sets its phase.
}

std::shared_ptr<const core::ClusterStatus> RolloutReconciler::LastStatus(
    const std::string& c) const {
  MutexLock lock(mu_);
  auto it = recorded_.find(c);
  if (it == recorded_.end()) return nullptr;
  return it->second;
}

bool RolloutReconciler::OperationInFlight(const std::string& cluster) const {
  MutexLock lock(mu_);
  auto it = recorded_.find(cluster);
  return it != recorded_.end() && !it->second->rollout.in_flight.empty();
}

void RolloutReconciler::Adopt(const std::string& cluster,
                              std::optional<core::ClusterStatus> recorded) {
  MutexLock lock(mu_);
  recorded_content_.erase(cluster);
  // Another replica may have moved the nodes on since this one last looked (before a freeze):
  // the next look is a full one, so no record reports a node as that old look saw it.
  last_observed_.erase(cluster);
  if (recorded) {
    recorded_[cluster] = std::make_shared<const core::ClusterStatus>(*std::move(recorded));
  } else {
    recorded_.erase(cluster);
  }
}

absl::Status RolloutReconciler::Record(const core::ClusterStatus& status, std::stop_token stop,
                                      News news) {
  deps_.metrics.cluster_phase.Set(status.cluster, core::ClusterPhaseName(status.phase));
  if (!status.rollout.staged.empty() || deps_.metrics.nodes_pending_reboot.Has(status.cluster)) {
    deps_.metrics.nodes_pending_reboot.Set(status.cluster,
                                           static_cast<double>(status.rollout.staged.size()));
  }
  // Most looks at a cluster change nothing: told apart field by field first, which costs a
  // copy, not the rendering of a status (a tenth of the daemon's CPU in a fleet rollout).
  {
    MutexLock lock(mu_);
    auto found = recorded_.find(status.cluster);
    if (found != recorded_.end() && core::SameContent(*found->second, status)) {
      return absl::OkStatus();
    }
  }
  std::string content = core::StatusContentYaml(status);
  std::shared_ptr<const core::ClusterStatus> last;
  {
    MutexLock lock(mu_);
    auto found = recorded_.find(status.cluster);
    if (found != recorded_.end()) {
      last = found->second;
      auto text = recorded_content_.find(status.cluster);
      if (text == recorded_content_.end()) {  // recorded by another process or replica
        text = recorded_content_.emplace(status.cluster, core::StatusContentYaml(*found->second))
                   .first;
      }
      if (text->second == content) return absl::OkStatus();
    }
  }
  // News alone (a node rebooting, back, its progress) does not wait for its push: nothing a
  // restart resumes from changed, and between two nodes it was a push on the critical path. Nor
  // does a Ready cluster moved to a commit that asks nothing of it: it rides along with the
  // write-ahead record of the cluster the commit changed, instead of a push ahead of it.
  const bool news_only = news == News::kYes ||
                         (last && (core::OnlyReportDiffers(*last, status) ||
                                   core::OnlyCommitOfReadyClusterDiffers(*last, status))) ||
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
  recorded_[status.cluster] = std::make_shared<const core::ClusterStatus>(status);
  recorded_content_[status.cluster] = std::move(content);
  return absl::OkStatus();
}

ReconcileOutcome RolloutReconciler::Reconcile(const std::string& cluster, std::stop_token stop) {
  Pass pass;
  pass.cluster = cluster;
  pass.log = ModuleLogger("rollout");
  ReconcileOutcome outcome = Run(pass, stop);
  outcome.looked_at = pass.looked_at;
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
    deps_.metrics.nodes_pending_reboot.Erase(cluster);
    if (deps_.in_flight_follower != nullptr) deps_.in_flight_follower->Forget(cluster);
  }
  return outcome;
}

ReconcileOutcome RolloutReconciler::Run(Pass& pass, std::stop_token stop) {
  // The whole reconcile, in order. The steps from Observe on are a turn: one decision and its
  // action, taken again while an action was done. A step still running in the background
  // comes before the gates, which only matter when a node may start.
  static constexpr Step kSteps[] = {
      &RolloutReconciler::Load,          &RolloutReconciler::ResolveInstaller,
      &RolloutReconciler::ForgetLiftedFailure,
      &RolloutReconciler::Observe,       &RolloutReconciler::Plan,
      &RolloutReconciler::Decide,        &RolloutReconciler::TakeStrayStep,
      &RolloutReconciler::WaitForRunningStep,
      &RolloutReconciler::ConsultGates,  &RolloutReconciler::HandOver,
      &RolloutReconciler::RestUnlessActing, &RolloutReconciler::Act,
      &RolloutReconciler::Remember};
  constexpr size_t kTurn = 3;  // Observe
  int turns = 0;
  for (size_t next = 0;; ++next) {
    if (next == std::size(kSteps)) {  // an action done and remembered
      // A node completed stops being followed now, not after the pass's next actions (the next
      // node's upgrade call can take the image's pull, while a probe of the node just done
      // would only open a stream to end it). A node started is followed from the pass's end,
      // as before: a stream opened before its upgrade call would carry every event of the
      // install, which wakes nothing.
      FollowInFlight(pass, /*start=*/false);
      if (absl::Status s = RecordDue(pass, /*finishing=*/false, stop); !s.ok()) {
        return ReconcileOutcome::TransientError(Text(s));
      }
      ++turns;
      next = kTurn;
    }
    if (next == kTurn) {
      pass.turned = true;
      if (turns >= options_.max_actions_per_reconcile || stop.stop_requested()) {
        return Finish(pass, Verdict::Rest(options_.node_poll_interval), stop);
      }
    }
    Verdict verdict = (this->*kSteps[next])(pass, stop);
    if (verdict.kind != Verdict::Kind::kNext) return Finish(pass, verdict, stop);
  }
}

absl::Status RolloutReconciler::RecordDue(Pass& pass, bool finishing, std::stop_token stop) {
  if (pass.due && !pass.due->after_waiting) pass.waiting.reset();  // the due status holds it
  if (finishing && pass.waiting) {
    if (absl::Status s = Record(*std::exchange(pass.waiting, std::nullopt), stop); !s.ok()) {
      return s;
    }
  }
  if (!pass.due) return absl::OkStatus();
  Pass::Due due = *std::exchange(pass.due, std::nullopt);
  return Record(due.status, stop, due.news);
}

std::vector<std::string> RolloutReconciler::InFlightNotWatched(const Pass& pass) {
  std::vector<std::string> nodes;
  for (const core::OperationInFlight& op : pass.memory.in_flight) {
    if (std::find(pass.watched.begin(), pass.watched.end(), op.node) == pass.watched.end()) {
      nodes.push_back(op.node);
    }
  }
  return nodes;
}

void RolloutReconciler::FollowInFlight(const Pass& pass, bool start) {
  if (deps_.in_flight_follower == nullptr) return;
  // A node the look read from its live watch is followed by the watch until it goes down: its
  // events would carry the whole install's task and phase events, which wake nothing
  // (docs/benchmarks.md). The look after its fall hands it to the follower.
  const std::vector<std::string> nodes = InFlightNotWatched(pass);
  if (start) {
    deps_.in_flight_follower->Follow(*pass.profile, nodes);
  } else {
    deps_.in_flight_follower->Keep(pass.profile->name, nodes);
  }
}

ReconcileOutcome RolloutReconciler::Finish(Pass& pass, const Verdict& verdict,
                                           std::stop_token stop) {
  const absl::Status recorded = RecordDue(pass, /*finishing=*/true, stop);
  if (pass.turned) FollowInFlight(pass, /*start=*/true);
  if (!recorded.ok()) return ReconcileOutcome::TransientError(Text(recorded));
  switch (verdict.kind) {
    case Verdict::Kind::kNext:  // every step went on: look again on the node poll
    case Verdict::Kind::kRest:
      return verdict.after ? ReconcileOutcome::RequeueAfter(*verdict.after)
                           : ReconcileOutcome::Done();
    case Verdict::Kind::kRetry:
      return ReconcileOutcome::TransientError(verdict.why);
    case Verdict::Kind::kStalled:
      return ReconcileOutcome::Stalled(verdict.why);
    case Verdict::Kind::kForget:
      return ReconcileOutcome::Forget();
  }
  return ReconcileOutcome::Done();
}

RolloutReconciler::Verdict RolloutReconciler::Load(Pass& pass, std::stop_token) {
  const std::string& cluster = pass.cluster;
  pass.desired = deps_.desired.Current();
  if (!pass.desired) return Verdict::Retry("no desired state read yet");
  pass.catalog = &pass.desired->profiles.release_catalog;
  if (deps_.proposal_of) pass.proposal = deps_.proposal_of(cluster);
  if (deps_.installer_releases != nullptr) {
    const std::vector<core::Version> known = deps_.installer_releases->Known();
    const std::vector<core::Version> broken = deps_.installer_releases->Broken();
    if (!known.empty() || !broken.empty()) {
      core::ReleaseCatalog& extended = pass.extended_catalog.emplace(*pass.catalog);
      for (const core::Version& v : known) extended.AddTalos(v);
      // A release marked broken blocks the plan before the next node that would get it.
      for (const core::Version& v : broken) extended.MarkTalosBroken(v);
      pass.catalog = &extended;
    }
  }
  pass.previous = LastStatus(cluster);
  const core::Diagnostics* invalid = nullptr;
  for (const core::InvalidProfile& profile : pass.desired->profiles.invalid) {
    if (profile.cluster == cluster) {
      invalid = &profile.diagnostics;
      break;
    }
  }
  if (invalid == nullptr && !pass.desired->profiles.defaults_diagnostics.empty()) {
    invalid = &pass.desired->profiles.defaults_diagnostics;
  }
  if (invalid != nullptr) {
    core::StatusInput in;
    in.cluster = cluster;
    in.previous = pass.previous.get();
    in.invalid = invalid;
    in.desired_commit = pass.desired->commit;
    in.now = deps_.env.Now();
    pass.due = Pass::Due{core::BuildClusterStatus(in)};
    pass.log->warn("phase=Blocked reason=invalid-profile error={}",
                   LogValue(pass.due->status.message));
    return Verdict::Stalled(pass.due->status.message);
  }
  pass.profile = pass.desired->profiles.Find(cluster);
  if (pass.profile == nullptr) return Verdict::Forget();
  if (pass.previous) pass.memory = pass.previous->rollout;
  if (pass.previous) pass.gates = pass.previous->gates;
  return Verdict::Next();
}

RolloutReconciler::Verdict RolloutReconciler::ResolveInstaller(Pass& pass, std::stop_token) {
  if (!pass.profile->talos_factory || deps_.installers == nullptr) return Verdict::Next();
  absl::StatusOr<core::ClusterProfile> resolved =
      deps_.installers->Resolve(*pass.profile, pass.memory.in_flight.empty());
  if (resolved.ok()) {
    pass.resolved = *std::move(resolved);
    pass.profile = &*pass.resolved;
    return Verdict::Next();
  }
  pass.log->warn("step=resolve-installer error={}", LogValue(Text(resolved.status())));
  // Blocked, and tried again with the backoff of a transient error: a factory that is down
  // comes back, and an extension missing for a release may be published later.
  const core::RolloutDecision blocked = core::Blocked(Text(resolved.status()));
  pass.due = Pass::Due{pass.Status(nullptr, nullptr, &blocked, deps_.env.Now())};
  return Verdict::Retry(blocked.message);
}

RolloutReconciler::Verdict RolloutReconciler::ForgetLiftedFailure(Pass& pass, std::stop_token) {
  // After resolution: a failure halts the schematic it happened on, whose ID only the
  // factory gives.
  if (!core::HaltedByFailure(pass.memory, *pass.profile)) pass.memory.failure.reset();
  return Verdict::Next();
}

RolloutReconciler::Verdict RolloutReconciler::Observe(Pass& pass, std::stop_token) {
  if (!pass.kept) pass.looked_at = deps_.env.Monotonic();  // a kept look keeps its time
  pass.plan_ahead.reset();
  pass.watched.clear();  // a look that fails read no node from a watch
  // While no other node may start, only the nodes in flight can change what is decided:
  // follow them, not the whole cluster.
  absl::StatusOr<core::ObservedCluster> observed =
      pass.kept ? *std::exchange(pass.kept, std::nullopt)
                : ObserveNodes(pass, !core::RoomBesideInFlight(*pass.profile, pass.memory));
  if (!observed.ok()) {
    pass.looked_at.reset();  // saw nothing
    return ObservationFailed(pass, observed.status());
  }
  // Nodes that do not answer keep their last recorded versions in status and progress, which
  // the plan made while looking did not see.
  if (!std::all_of(
          observed->nodes.begin(), observed->nodes.end(),
          [](const core::NodeObservation& n) { return n.reachable && n.extensions_observed; })) {
    pass.plan_ahead.reset();
  }
  for (const core::NodeObservation& node : observed->nodes) {
    if (node.watched) pass.watched.push_back(node.name);
  }
  pass.look = Pass::Look{
      core::WithLastKnownVersions(*std::move(observed), pass.previous.get()), {}, deps_.env.Now()};
  pass.decision = {};
  pass.actor_id.clear();
  return Verdict::Next();
}

RolloutReconciler::Verdict RolloutReconciler::ObservationFailed(Pass& pass,
                                                                const absl::Status& error) {
  const ErrorClass error_class = ClassifyError(error, ErrorSource::kObserve);
  pass.log->warn("step=observe class={} error={}", ErrorClassName(error_class),
                 LogValue(Text(error)));
  if (error_class != ErrorClass::kStall) return Verdict::Retry(Text(error));
  // Credentials or permissions: nothing changes until someone fixes them.
  const core::RolloutDecision blocked = core::Blocked("cannot observe the nodes: " + Text(error));
  pass.due = Pass::Due{pass.Status(nullptr, nullptr, &blocked, deps_.env.Now()), News::kNo,
                       /*after_waiting=*/true};
  return Verdict::Stalled(blocked.message);
}

RolloutReconciler::Verdict RolloutReconciler::Plan(Pass& pass, std::stop_token stop) {
  const core::ClusterProfile& profile = *pass.profile;
  pass.look.plan = pass.plan_ahead
                       ? *std::exchange(pass.plan_ahead, std::nullopt)
                       : core::PlanCluster(profile, pass.look.observed,
                                           pass.desired->profiles.support_matrix, *pass.catalog);
  if (profile.promotion && !pass.upstream && pass.look.plan.status == core::PlanStatus::kPlanned) {
    pass.upstream = UpstreamStatus(profile, stop);
  }
  return Verdict::Next();
}

RolloutReconciler::Verdict RolloutReconciler::Decide(Pass& pass, std::stop_token) {
  pass.decision = DecideNow(pass);
  return Verdict::Next();
}

core::RolloutDecision RolloutReconciler::DecideNow(const Pass& pass) const {
  const core::ClusterProfile& profile = *pass.profile;
  const core::ClusterPlan& plan = pass.look.plan;
  const core::TimePoint now = pass.look.now;
  core::RolloutInput input{profile,
                           plan,
                           pass.look.observed,
                           pass.memory,
                           EvaluateWindows(profile.policy.windows, now),
                           {},
                           now};
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

RolloutReconciler::Verdict RolloutReconciler::TakeStrayStep(Pass& pass, std::stop_token) {
  const std::string& cluster = pass.profile->name;
  const std::optional<OutstandingStep> step = deps_.executor.Outstanding(cluster);
  if (options_.dry_run || !step || !step->done || step->Is(pass.decision)) return Verdict::Next();
  if (!step->failed) {
    if (InstallOnAnotherBoot(pass, *step)) return Verdict::Next();
    // A node's step that succeeded holds the other nodes until its own decision collects it
    // (WaitForRunningStep); once that node's rollout acts otherwise, nothing will: dropped.
    if (!step->node.empty() && step->node == pass.decision.node &&
        core::TraitsOf(pass.decision.kind).acts) {
      static_cast<void>(deps_.executor.TakeFinished(cluster));
      pass.log->debug("action={} node={} result=dropped reason={}",
                      core::ActionKindName(step->kind), LogValue(step->node),
                      LogValue("the node's rollout went on without it"));
    }
    return Verdict::Next();
  }
  // Only a failed call to a node whose operation is still only recorded: a step that succeeded
  // (an install while its node still reports the install) or any other step (a pre-pull) waits
  // for its own decision to collect it, as before.
  const bool recorded_only =
      std::any_of(pass.memory.in_flight.begin(), pass.memory.in_flight.end(),
                  [&](const core::OperationInFlight& op) {
                    return op.node == step->node && op.phase == core::OperationPhase::kRecorded;
                  });
  if (!recorded_only) return Verdict::Next();
  std::optional<absl::StatusOr<ActionResult>> result = deps_.executor.TakeFinished(cluster);
  if (!result || result->ok()) return Verdict::Next();
  pass.log->warn("action={} node={} error={} (after the rollout moved on)",
                 core::ActionKindName(step->kind), LogValue(step->node),
                 LogValue(Text(result->status())));
  if (CallNeverReceived(pass, step->node, result->status())) pass.decision = DecideNow(pass);
  return Verdict::Next();
}

bool RolloutReconciler::CallNeverReceived(Pass& pass, const std::string& node,
                                          const absl::Status& error) {
  if (!AskedNodeNothing(error)) return false;
  return ForgetBoot(pass, node, core::AfterCallNeverReceived(pass.memory, node),
                    "the call never reached the node; it is asked on the boot it is on");
}

bool RolloutReconciler::InstallOnAnotherBoot(Pass& pass, const OutstandingStep& step) {
  if (step.kind != core::ActionKind::kInstallImage) return false;
  const core::NodeObservation* seen = pass.look.observed.FindNode(step.node);
  if (seen == nullptr) return false;
  if (!ForgetBoot(pass, step.node, core::AfterInstallOnAnotherBoot(pass.memory, *seen, step.image),
                  "its install went through on the boot it came back on")) {
    return false;
  }
  pass.decision = DecideNow(pass);
  return true;
}

bool RolloutReconciler::ForgetBoot(Pass& pass, const std::string& node, core::RolloutMemory memory,
                                   std::string_view reason) {
  if (memory == pass.memory) return false;
  pass.memory = std::move(memory);
  pass.log->info("node={} step=forget-boot reason={}", LogValue(node), LogValue(reason));
  pass.due =
      Pass::Due{pass.Status(&pass.look.plan, &pass.look.observed, &pass.decision, pass.look.now)};
  return true;
}

RolloutReconciler::Verdict RolloutReconciler::WaitForRunningStep(Pass& pass, std::stop_token) {
  core::RolloutDecision& decision = pass.decision;
  // A dry run starts nothing in the background; recording a failure does not act, and halts
  // the cluster.
  if (options_.dry_run || !core::TraitsOf(decision.kind).held_by_running_step) {
    return Verdict::Next();
  }
  const std::optional<OutstandingStep> step = deps_.executor.Outstanding(pass.profile->name);
  if (!step || step->Is(decision)) return Verdict::Next();
  // A node's step that succeeded still holds the others while its node's operation is in
  // flight, until that node's next decision takes its result: another node's background step
  // would drop it, and the node would be asked again (a second install). Its own node is not
  // held, so the result is collected, or dropped by TakeStrayStep; a node with nothing in
  // flight, or taken out of the profile meanwhile, holds nothing: no cluster waits for ever.
  const bool awaits_collection = step->done && !step->failed && !step->node.empty() &&
                                 step->node != decision.node &&
                                 NodeInFlight(*pass.profile, pass.memory, step->node);
  if (step->done && !awaits_collection) return Verdict::Next();
  decision = core::HeldByRunningStep(decision, step->kind, step->node,
                                     pass.look.now + options_.node_poll_interval);
  return Rest(pass);
}

RolloutReconciler::Verdict RolloutReconciler::ConsultGates(Pass& pass, std::stop_token stop) {
  if (pass.CheckGates(deps_.gates, pass.decision,
                      KubernetesStepStarted(pass.profile->name, pass.look.plan), pass.look.now,
                      stop)) {
    pass.decision = DecideNow(pass);
  }
  return Verdict::Next();
}

RolloutReconciler::Verdict RolloutReconciler::HandOver(Pass& pass, std::stop_token) {
  const core::ClusterPlan& plan = pass.look.plan;
  core::RolloutDecision& decision = pass.decision;
  if (!core::TraitsOf(decision.kind).handed_over) {
    if (options_.dry_run && core::TraitsOf(decision.kind).acts) decision = core::DryRun(decision);
    return Verdict::Next();
  }
  if (kubernetes_upgrades_ && !options_.dry_run) {
    k8s_upgrade::FollowKubernetesUpgrade(*kubernetes_upgrades_, *pass.profile, plan,
                                         pass.desired->profiles.support_matrix, pass.look.now,
                                         options_.node_poll_interval, decision);
    return Verdict::Next();
  }
  // Not run here (no runner, or a dry run): say so rather than claim an upgrade in progress;
  // `plan` words it the same way (core/plan_outlook.h).
  decision = core::KubernetesStepNotRun(
      decision, *pass.profile, plan.steps.front(),
      options_.dry_run ? "dry run" : "--kubernetes-upgrade-mode off");
  return Verdict::Next();
}

RolloutReconciler::Verdict RolloutReconciler::RestUnlessActing(Pass& pass, std::stop_token) {
  if (core::TraitsOf(pass.decision.kind).acts && !options_.dry_run) return Verdict::Next();
  return Rest(pass);
}

RolloutReconciler::Verdict RolloutReconciler::Rest(Pass& pass) {
  const core::RolloutDecision& decision = pass.decision;
  const core::TimePoint now = pass.look.now;
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
                    : pass.waiting        ? News::kYes
                                          : News::kIfMemoryUnchanged;
  pass.due = Pass::Due{pass.Status(&pass.look.plan, &pass.look.observed, &decision, now), news};
  if (!decision.wait_until) return Verdict::Rest(std::nullopt);
  const auto wait =
      std::max(std::chrono::milliseconds(0),
               std::chrono::duration_cast<std::chrono::milliseconds>(*decision.wait_until - now));
  // A node in flight is looked at on the node poll interval, not the rollout's seconds; a
  // settle time with none in flight is waited out.
  return Verdict::Rest(core::LooksAgainOnNodePoll(decision, pass.memory)
                           ? std::min(wait, NodePoll(pass))
                           : wait);
}

RolloutReconciler::Verdict RolloutReconciler::Act(Pass& pass, std::stop_token stop) {
  const core::ClusterProfile& profile = *pass.profile;
  core::RolloutDecision& decision = pass.decision;
  const core::TimePoint now = pass.look.now;
  const core::ActionTraits& traits = core::TraitsOf(decision.kind);
  const std::optional<OutstandingStep> outstanding = deps_.executor.Outstanding(profile.name);
  const bool collecting = outstanding && outstanding->Is(decision);
  // A background step's line is written when it starts and when it ends, not at every look.
  pass.log->log(collecting ? spdlog::level::debug : spdlog::level::info,
                "phase={} action={} node={} progress={} message={}",
                core::ClusterPhaseName(decision.phase), traits.name, LogValue(decision.node),
                LogValue(decision.progress.ToString()), LogValue(decision.message));
  if (traits.only_records) return Verdict::Next();
  if (!traits.keeps_etcd) pass.etcd_read = {};
  absl::StatusOr<ActionResult> result = deps_.executor.Execute(profile, decision, stop);
  if (result.ok() && result->in_progress) {
    decision = core::StillRunning(decision, result->detail, now + options_.node_poll_interval);
    return Rest(pass);
  }
  if (result.ok()) {
    pass.actor_id = result->actor_id;
    if (!result->detail.empty() || traits.runs_in_background) {
      pass.log->info("action={} node={} result={}", traits.name, LogValue(decision.node),
                     LogValue(result->detail.empty() ? "done" : result->detail));
    }
    return Verdict::Next();
  }
  const ErrorClass error_class = ClassifyError(result.status(), ErrorSource::kAct);
  pass.log->log(error_class == ErrorClass::kHalt ? spdlog::level::err : spdlog::level::warn,
                "action={} node={} class={} error={}", traits.name, LogValue(decision.node),
                ErrorClassName(error_class), LogValue(Text(result.status())));
  // Whatever comes of the error, a node the call never reached may be asked again.
  static_cast<void>(CallNeverReceived(pass, decision.node, result.status()));
  switch (error_class) {
    case ErrorClass::kBusy:
      decision = core::StillRunning(decision, "the node reports one already in progress",
                                    now + options_.node_poll_interval);
      return Rest(pass);
    case ErrorClass::kRetry:
    case ErrorClass::kStall:
      return Verdict::Retry(Text(result.status()));
    case ErrorClass::kHalt:
      break;
  }
  decision = core::ActionRefused(decision, profile, Text(result.status()), now);
  return Verdict::Next();
}

RolloutReconciler::Verdict RolloutReconciler::Remember(Pass& pass, std::stop_token) {
  const core::RolloutDecision& decision = pass.decision;
  const Pass::Look& look = pass.look;
  const core::ActionTraits& traits = core::TraitsOf(decision.kind);
  Count(decision, pass.memory, look.now);
  pass.memory =
      core::RecordAction(decision, pass.memory, pass.profile->policy, look.now, pass.actor_id);
  if (traits.completes_node) pass.gates_fresh = false;
  if (traits.notable) pass.events.push_back(decision.message);
  pass.previous = std::make_shared<const core::ClusterStatus>(
      pass.Status(&look.plan, &look.observed, &decision, look.now));
  // The history now holds them: a later status builds on it, recorded or not.
  pass.events.clear();
  if (traits.keeps_observation) pass.kept = std::move(pass.look.observed);
  if (traits.record_may_wait) {
    pass.waiting = *pass.previous;
  } else {
    pass.due = Pass::Due{*pass.previous};
  }
  return Verdict::Next();
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
    std::shared_ptr<const core::ClusterStatus> mine = LastStatus(a.cluster);
    auto it = branch.find(a.cluster);
    if (it != branch.end() && (!mine || it->second.updated >= mine->updated)) {
      upstream.emplace(a.cluster, std::move(it->second));
    } else if (mine) {
      upstream.emplace(a.cluster, *mine);
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

bool RolloutReconciler::InFlightHeard(const Pass& pass) const {
  if (pass.memory.in_flight.empty()) return false;
  std::vector<std::string> nodes = InFlightNotWatched(pass);
  InFlightFollower* const follower = deps_.in_flight_follower;
  if (follower != nullptr) {
    // A node this look found down and not followed yet is followed from the end of this
    // reconcile (FollowInFlight), and its follow, finding it down, subscribes to it again on
    // its backoff a few milliseconds from now: heard then, as the follower will say. Counted so
    // already, the look after a node's fall is not followed one node poll later by a look that
    // only finds it still down.
    std::erase_if(nodes, [&](const std::string& node) {
      const core::NodeObservation* seen = pass.look.observed.FindNode(node);
      return seen != nullptr && !seen->reachable &&
             !follower->IsFollowing(pass.profile->name, node);
    });
  }
  if (nodes.empty()) return true;  // every one watched, or about to be followed while down
  return follower != nullptr && follower->Hearing(pass.profile->name, nodes);
}

std::chrono::milliseconds RolloutReconciler::NodePoll(const Pass& pass) const {
  // While every node in flight is heard, what ends its wait (or fails it) and its stream
  // breaking wake the cluster: the poll is then only there for a wake lost, and a look costs
  // two to four Talos calls a node. Most of an upgrade is spent so.
  return options_.node_poll_interval * (InFlightHeard(pass) ? core::kHeardPollFactor : 1);
}

void RolloutReconciler::Count(const core::RolloutDecision& decision,
                              const core::RolloutMemory& memory, core::TimePoint now) {
  const core::ActionTraits& traits = core::TraitsOf(decision.kind);
  if (traits.starts_node) deps_.metrics.node_upgrades_started.Inc();
  const char* result = traits.ends_node;
  if (result == nullptr) return;
  deps_.metrics.node_upgrades.Inc(result);
  for (const core::OperationInFlight& op : memory.in_flight) {
    if (op.node == decision.node) {
      deps_.metrics.node_upgrade_duration.Observe(result, now - op.started);
    }
  }
}

absl::StatusOr<core::ObservedCluster> RolloutReconciler::ObserveWhole(Pass& pass) {
  const core::ClusterProfile& profile = *pass.profile;
  if (!pass.memory.in_flight.empty() || !pass.memory.staged.empty()) {
    return deps_.observer.Observe(profile);
  }
  // Most looks find nothing to do: etcd is asked only when the decision may read it.
  absl::StatusOr<core::ObservedCluster> observed = deps_.observer.ObserveWithoutEtcd(profile);
  if (!observed.ok()) return observed;
  core::ClusterPlan plan =
      core::PlanCluster(profile, *observed, pass.desired->profiles.support_matrix, *pass.catalog);
  if (!core::DecisionReadsEtcd(plan, pass.memory)) {
    pass.plan_ahead = std::move(plan);
    return observed;
  }
  if (absl::Status s = deps_.observer.ObserveEtcdReusing(profile, *observed, pass.etcd_read);
      !s.ok()) {
    return s;
  }
  return observed;
}

absl::StatusOr<core::ObservedCluster> RolloutReconciler::ObserveNodes(Pass& pass,
                                                                      bool follow_in_flight) {
  const core::ClusterProfile& profile = *pass.profile;
  std::optional<core::ObservedCluster> last;
  if (follow_in_flight) {
    MutexLock lock(mu_);
    if (auto it = last_observed_.find(profile.name); it != last_observed_.end()) last = it->second;
  }
  // A profile whose nodes changed since that look, or a look without etcd, is looked at whole.
  if (last && (!last->etcd_observed || last->nodes.size() != profile.nodes.size() ||
               !std::all_of(profile.nodes.begin(), profile.nodes.end(),
                            [&](const core::NodeSpec& n) { return last->FindNode(n.name); }))) {
    last.reset();
  }
  if (!last) {
    absl::StatusOr<core::ObservedCluster> full = ObserveWhole(pass);
    if (full.ok()) {
      MutexLock lock(mu_);
      last_observed_[profile.name] = *full;
    }
    return full;
  }
  std::vector<std::string> nodes;
  for (const core::OperationInFlight& op : pass.memory.in_flight) nodes.push_back(op.node);
  absl::StatusOr<core::ObservedCluster> some =
      deps_.observer.ObserveNodesWithoutEtcd(profile, nodes);
  if (!some.ok()) return some;
  if (absl::Status s = ObserveEtcdInFlight(pass, *last, *some); !s.ok()) return s;
  // The nodes in flight as they are now; every other node as the last full look saw it.
  for (core::NodeObservation& node : last->nodes) {
    if (const core::NodeObservation* seen = some->FindNode(node.name);
        seen && std::find(nodes.begin(), nodes.end(), node.name) != nodes.end()) {
      node = *seen;
    }
  }
  return *std::move(last);
}

absl::Status RolloutReconciler::ObserveEtcdInFlight(Pass& pass, const core::ObservedCluster& last,
                                                    core::ObservedCluster& some) {
  if (some.etcd_observed) return absl::OkStatus();
  // etcd of the control planes in flight whose member a decision may read (EtcdOfNodeInFlight).
  core::ObservedCluster asked;
  asked.name = some.name;
  asked.etcd_observed = false;
  for (const core::OperationInFlight& op : pass.memory.in_flight) {
    core::NodeObservation* seen = some.FindNode(op.node);
    if (seen == nullptr || !seen->reachable || !core::IsControlPlane(*pass.profile, op.node)) {
      continue;
    }
    switch (core::EtcdOfNodeInFlight(*seen, op)) {
      case core::InFlightEtcd::kAsk:
        asked.nodes.push_back(*seen);
        break;
      case core::InFlightEtcd::kKeep:
        if (const core::NodeObservation* before = last.FindNode(op.node)) {
          seen->etcd_member = before->etcd_member;
          seen->etcd_healthy = before->etcd_healthy;
          seen->etcd_leader = before->etcd_leader;
        }
        break;
      case core::InFlightEtcd::kUnknown:  // as its refused read would say
        seen->etcd_member = seen->etcd_healthy = seen->etcd_leader = false;
        break;
    }
  }
  if (!asked.nodes.empty()) {
    if (absl::Status s = deps_.observer.ObserveEtcdReusing(*pass.profile, asked, pass.etcd_read);
        !s.ok()) {
      return s;
    }
    for (const core::NodeObservation& node : asked.nodes) *some.FindNode(node.name) = node;
  }
  some.etcd_observed = true;
  return absl::OkStatus();
}

}  // namespace tr::reconciler
