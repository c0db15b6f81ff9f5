// The reconcile of one cluster (docs/architecture.md): a short ordered list of steps — read the
// desired profile, observe the nodes, plan, decide, act, record — repeated while the rollout
// state machine has something to do now, and ending in an outcome that says when to look
// again. Every action's result is recorded on the status branch before the next call to a
// node, and an operation is recorded before its node is called, so a restart resumes safely; a
// result whose loss only repeats a step (core::RecordMayWaitForNext) goes out in the next push.
//
// Thread-safe: the controller never reconciles one cluster twice at once; different clusters
// run in parallel.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/env.h"
#include "base/mutex.h"
#include "core/status.h"
#include "reconciler/clients/factory/installer_resolution.h"
#include "reconciler/clients/releases/release_cache.h"
#include "reconciler/loop/controller.h"
#include "reconciler/loop/desired_state.h"
#include "reconciler/loop/node_event_wake.h"
#include "reconciler/loop/status_store.h"
#include "reconciler/operations/executor.h"
#include "reconciler/operations/gates/health_gate_runner.h"
#include "reconciler/operations/k8s_upgrade/upgrade_runner.h"
#include "reconciler/operations/observer.h"
#include "reconciler/runtime/metrics.h"

namespace tr::reconciler {

struct RolloutReconcilerOptions {
  std::chrono::milliseconds node_poll_interval{5000};
  bool dry_run = false;  // decide and report, never act
  int max_actions_per_reconcile = 32;
};

class RolloutReconciler final : public ClusterReconciler {
 public:
  struct Deps {
    const DesiredState& desired;
    FleetObserver& observer;
    RolloutExecutor& executor;
    StatusStore& store;
    Env& env;
    Metrics& metrics;
    gates::HealthGateRunner* gates = nullptr;  // none: policy.healthChecks hold nothing
    // Where the clusters a profile is promoted after are read (spec.promotion): the status
    // branch, which other reconciler processes write too. None: this process's records only.
    StatusStore* peers = nullptr;
    // Releases listed from the installer's registry (--installer-registry), added to the
    // repository's release catalog. None: the catalog alone.
    const releases::ReleaseCache* installer_releases = nullptr;
    // Fills the installer of a profile that names an Image Factory schematic (--image-factory
    // and the profiles' factories). None: such a profile is planned Blocked.
    factory::InstallerResolver* installers = nullptr;
    // The release proposal that concerns a cluster, shown in its status
    // (reconciler/features/proposals/proposal_board.h). None: no proposal is shown.
    std::function<std::optional<core::ProposalRef>(const std::string&)> proposal_of = {};
    // Told after each reconcile which nodes the cluster has in flight, whose events then wake
    // it before the node poll (NodeEventWake). None: the poll alone.
    InFlightFollower* in_flight_follower = nullptr;
  };

  // `recorded` is every cluster's status as last recorded (StatusStore::LoadAll).
  RolloutReconciler(Deps deps, RolloutReconcilerOptions options,
                    std::map<std::string, core::ClusterStatus> recorded);

  ReconcileOutcome Reconcile(const std::string& cluster, std::stop_token stop) override;

  // The last recorded status of `cluster`, or null. Shared, not copied: every reconcile starts
  // from it.
  std::shared_ptr<const core::ClusterStatus> LastStatus(const std::string& cluster) const;
  // True when the last recorded status of `cluster` has a node operation in flight (begun, not
  // yet completed or failed).
  bool OperationInFlight(const std::string& cluster) const;
  // Replaces what this process remembers of `cluster` with `recorded` (its status as another
  // replica left it on the branch; nullopt: none), before a replica that just took the
  // cluster's shard reconciles it. Forgets its last look at the nodes too: the next reconcile
  // observes every node afresh.
  void Adopt(const std::string& cluster, std::optional<core::ClusterStatus> recorded);
  // Runs the Kubernetes steps through `runner` (not owned; outlives this). Without one they are
  // reported Blocked. Call before the first Reconcile.
  void SetKubernetesUpgrades(k8s_upgrade::KubernetesUpgradeRunner* runner) {
    kubernetes_upgrades_ = runner;
  }

 private:
  struct Pass;  // one reconcile's working state (rollout_reconciler.cc)

  // What a step of the reconcile says: go on to the next step; rest (record what the pass
  // holds and look again `after`, or only at the next event); retry with backoff; stalled
  // until something changes outside; forget the cluster (it left the profiles).
  struct Verdict {
    enum class Kind { kNext, kRest, kRetry, kStalled, kForget };
    Kind kind = Kind::kNext;
    std::string why;                                // kRetry, kStalled
    std::optional<std::chrono::milliseconds> after;  // kRest

    static Verdict Next() { return {}; }
    static Verdict Rest(std::optional<std::chrono::milliseconds> after) {
      return {Kind::kRest, "", after};
    }
    static Verdict Retry(std::string why) { return {Kind::kRetry, std::move(why), std::nullopt}; }
    static Verdict Stalled(std::string why) {
      return {Kind::kStalled, std::move(why), std::nullopt};
    }
    static Verdict Forget() { return {Kind::kForget, "", std::nullopt}; }
  };
  // Every step of the reconcile has this signature; Run goes through them in order
  // (docs/architecture.md, "One reconcile").
  using Step = Verdict (RolloutReconciler::*)(Pass&, std::stop_token);

  // Runs the steps, repeating those of a turn (observe … remember) while an action was done
  // and the reconcile's action budget lasts, and ends in Finish.
  ReconcileOutcome Run(Pass& pass, std::stop_token stop);
  // The one way out: records what the pass holds (RecordDue), tells the in-flight follower,
  // and turns the verdict into the controller's outcome.
  ReconcileOutcome Finish(Pass& pass, const Verdict& verdict, std::stop_token stop);
  // Tells the in-flight follower the nodes the pass has in flight now and did not read from a
  // live watch: after every action remembered only to stop following the others (`start`
  // false), at the end to follow them.
  void FollowInFlight(const Pass& pass, bool start);
  // The nodes in flight the pass's look did not read from a live watch.
  static std::vector<std::string> InFlightNotWatched(const Pass& pass);
  // The one place a status is recorded: the status due, and with `finishing` also a result
  // that waited for the next record (core::RecordMayWaitForNext).
  absl::Status RecordDue(Pass& pass, bool finishing, std::stop_token stop);

  // -- Once a reconcile.
  // The desired state and the cluster's profile; an invalid profile is recorded and stalls.
  Verdict Load(Pass& pass, std::stop_token stop);
  // Fills the Image Factory installer of a profile that names a schematic; one the factory
  // cannot make is recorded Blocked and retried.
  Verdict ResolveInstaller(Pass& pass, std::stop_token stop);
  // A recorded failure halts only the target, schematic and retry token it happened under.
  Verdict ForgetLiftedFailure(Pass& pass, std::stop_token stop);
  // -- Each turn: one decision and its action.
  // The cluster's nodes now (or the look kept from the last turn).
  Verdict Observe(Pass& pass, std::stop_token stop);
  // The plan from what was seen, and the upstream clusters' status when a promotion needs it.
  Verdict Plan(Pass& pass, std::stop_token stop);
  Verdict Decide(Pass& pass, std::stop_token stop);
  // Takes the error of a node's install or upgrade that failed in the background after the
  // rollout moved past it (its node went down meanwhile), which no action would collect: one
  // that never reached the node lets it be asked again (CallNeverReceived). A node's install
  // that succeeded while its node came back on another boot is collected there
  // (InstallOnAnotherBoot). Drops a node's step that succeeded once that node's decision is
  // another action.
  Verdict TakeStrayStep(Pass& pass, std::stop_token stop);
  // While another step of the cluster runs in the background, or a node's step succeeded and
  // waits for its node's decision to collect it, turns an acting decision of another node into
  // a wait for it on the node poll interval, and rests. One action per cluster at a time.
  Verdict WaitForRunningStep(Pass& pass, std::stop_token stop);
  // Runs the health checks when the decision would start something (Pass::CheckGates), and
  // decides again with their answers.
  Verdict ConsultGates(Pass& pass, std::stop_token stop);
  // Hands a decision to start the Kubernetes step to the runner (or, without one or in a dry
  // run, reports the step Blocked), and words what a dry run would do.
  Verdict HandOver(Pass& pass, std::stop_token stop);
  // Rests on a decision that acts on nothing, and on every decision of a dry run.
  Verdict RestUnlessActing(Pass& pass, std::stop_token stop);
  // Makes the status of a decision that acts on nothing due, and says when to look again.
  Verdict Rest(Pass& pass);
  // Performs the decision's action, its errors classified by ClassifyError. A refusal turns
  // the decision into a recorded failure (core::ActionRefused); a step still running, or a
  // node busy with one, into a wait (core::StillRunning), and rests; an error to retry ends
  // the reconcile.
  Verdict Act(Pass& pass, std::stop_token stop);
  // Brings what the reconcile remembers up to date with the action done (the counters, the
  // rollout memory, the history) and makes its status due, or waiting for the next record.
  Verdict Remember(Pass& pass, std::stop_token stop);

  // The cluster's nodes now: every node, or with `follow_in_flight` only the nodes in flight
  // (merged into the last full observation of the cluster, when there is one).
  absl::StatusOr<core::ObservedCluster> ObserveNodes(Pass& pass, bool follow_in_flight);
  // Adds etcd to `some`, a look at the nodes in flight without it, where a decision may read it
  // (core::EtcdOfNodeInFlight); `last` is the last whole look.
  absl::Status ObserveEtcdInFlight(Pass& pass, const core::ObservedCluster& last,
                                   core::ObservedCluster& some);
  // Every node of the pass's cluster; etcd only when the decision may read it.
  absl::StatusOr<core::ObservedCluster> ObserveWhole(Pass& pass);
  Verdict ObservationFailed(Pass& pass, const absl::Status& error);
  // After `node`'s call failed with `error`: when the call never reached the node and its
  // operation is only recorded, the operation stops waiting for the boot it was recorded on
  // (core::AfterCallNeverReceived) and that is due to be recorded. True when it changed.
  bool CallNeverReceived(Pass& pass, const std::string& node, const absl::Status& error);
  // After `step`, a node's install, succeeded: when the look shows the node, still only
  // recorded, on its old Talos on another boot, the operation stops waiting for the boot it
  // was recorded on (core::AfterInstallOnAnotherBoot) and the decision is taken again, to
  // collect the install. True when it changed.
  bool InstallOnAnotherBoot(Pass& pass, const OutstandingStep& step);
  // `memory`, when it differs from the pass's, replaces it and is due to be recorded: `node`'s
  // operation forgot its boot for `reason`. True when it changed.
  bool ForgetBoot(Pass& pass, const std::string& node, core::RolloutMemory memory,
                  std::string_view reason);
  core::RolloutDecision DecideNow(const Pass& pass) const;
  // The first step is Kubernetes and the runner already started its task.
  bool KubernetesStepStarted(const std::string& cluster, const core::ClusterPlan& plan) const;
  // The last status of each cluster `profile` is promoted after: the newer of the one read
  // from `Deps::peers` and this process's own record.
  std::map<std::string, core::ClusterStatus> UpstreamStatus(const core::ClusterProfile& profile,
                                                            std::stop_token stop);
  // Whether every node in flight is heard: read from a live watch by the pass's look, heard by
  // the follower (node_event_wake.h), or found down by the look and followed from its end.
  bool InFlightHeard(const Pass& pass) const;
  // How soon the nodes in flight are looked at again.
  std::chrono::milliseconds NodePoll(const Pass& pass) const;
  // Counts the node upgrades `decision` starts or ends; an ending one's duration is from its
  // record in `memory` (before the decision is applied to it) to `now`.
  void Count(const core::RolloutDecision& decision, const core::RolloutMemory& memory,
             core::TimePoint now);
  // Whether a record is news, posted (StatusStore::RecordSoon) rather than waited for, beyond
  // a status that differs from the last only in its report.
  enum class News { kNo, kIfMemoryUnchanged, kYes };
  // Records `status` when it differs from the last recorded one; the store's error otherwise.
  // Called by RecordDue alone.
  absl::Status Record(const core::ClusterStatus& status, std::stop_token stop,
                      News news = News::kNo);

  Deps deps_;
  const RolloutReconcilerOptions options_;
  mutable Mutex mu_;
  // By cluster, hashed like the maps below: every reconcile finds its cluster in them.
  std::unordered_map<std::string, std::shared_ptr<const core::ClusterStatus>> recorded_
      ABSL_GUARDED_BY(mu_);
  // core::StatusContentYaml of each status this process recorded, so that telling whether a
  // new status changes anything renders only the new one (once per look at a cluster).
  std::unordered_map<std::string, std::string> recorded_content_ ABSL_GUARDED_BY(mu_);
  // Each cluster's last observation of every node, for following the nodes in flight.
  std::unordered_map<std::string, core::ObservedCluster> last_observed_ ABSL_GUARDED_BY(mu_);
  k8s_upgrade::KubernetesUpgradeRunner* kubernetes_upgrades_ = nullptr;
};

}  // namespace tr::reconciler
