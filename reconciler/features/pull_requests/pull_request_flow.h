// The reconciler's side of a pull request on the forge:
//  - opened, updated or reopened (into the watched branch): its head is fetched from the
//    configured repository (the dialect's head ref: refs/pull/N/head, GitLab's
//    refs/merge-requests/N/head), every cluster it changes is planned against the live fleet
//    (PreviewPlan: observed through the watched branch's profiles only), the plan becomes the
//    pull request's one comment, and the head gets the commit status `talos-reconciler/plan`
//    (failure when a profile is invalid or a plan is blocked). A pull request that changes no
//    profile gets neither. A head past a preview limit (gitsource::PreviewSnapshotLimits: file
//    count, total bytes) is not planned: its status fails and its comment says which limit,
//    read from object headers before any blob, so the limit bounds the work a pull request can
//    cause; its objects are not kept.
//  - closed or merged: the preview ref kept for its head is deleted from the mirror.
//  - merged: once the reconcilers record statuses for the merge commit, the same comment
//    gains the rollout's progress and result, and the merge commit gets
//    `talos-reconciler/rollout`, pending then success, failure or superseded (sent as success),
//    judged by JudgeRollout (rollout_verdict.h); a final one is never sent again, so a later
//    merge for the same clusters is reported on its own pull request only. The pull request is
//    the one the merged webhook named, else the one the forge says the commit belongs to. The
//    rollout is the clusters the pull request's last plan changed (another cluster waiting for
//    its window neither holds nor fails it), named on a hidden line of the plan, so it is
//    known to whichever process reports; every cluster when no plan says so.
// Several replicas (--leader-elect): a pull request's plan is made by the replica its webhook
// reaches (one delivery, one replica). Rollouts are reported by one replica only, the one
// `reports` says (the holder of shard 0): it re-reads the status branch on Refresh() and
// reports from every replica's clusters, and reads the plan back from the comment once per
// rollout (another replica may have planned the last revision). A replica that becomes the
// reporter sends the state of the rollouts its clusters are on again. The others plan, record
// and remember merges, but send nothing about rollouts.
// A pull request's content is only read: it is never applied and its endpoints never dialled.
//
// Thread-safe. Every call returns at once; one background thread talks to Git and the forge,
// so neither a webhook nor a rollout ever waits on them.
#pragma once

#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "core/status.h"
#include "gitsource/git_source.h"
#include "reconciler/clients/factory/factory_installers.h"
#include "reconciler/clients/forge/forge_client.h"
#include "reconciler/clients/forge/forge_dialect.h"
#include "reconciler/clients/forge/webhook_event.h"
#include "reconciler/clients/talos_credentials.h"
#include "reconciler/features/pull_requests/pr_comments.h"
#include "reconciler/features/pull_requests/pr_event_queue.h"
#include "reconciler/features/pull_requests/rollout_verdict.h"
#include "reconciler/loop/status_store.h"
#include "spdlog/spdlog.h"

namespace tr::reconciler::pull_requests {

inline constexpr char kPlanContext[] = "talos-reconciler/plan";
inline constexpr char kRolloutContext[] = "talos-reconciler/rollout";

struct PullRequestFlowOptions {
  const forge::ForgeApiDialect* dialect = nullptr;  // the forge's; must be set
  TalosCredentials credentials;                     // as `run`'s
  std::string self_node;
  std::string status_url;  // linked from the rollout status; empty: none
  // Whether the daemon runs Kubernetes steps (--kubernetes-upgrade-mode inprocess): the plan
  // marks them "not-run" otherwise, as `plan` does.
  bool kubernetes_upgrades = true;
  int shards = 0;  // --shards when above 1: each profile's spec.shard must be below it
  // With several replicas (--leader-elect): whether this replica reports rollouts now (it holds
  // shard 0). Unset: it always does. Called on the flow's thread; must be thread-safe.
  std::function<bool()> reports;
  // The status branch, re-read while reporting on Refresh() and on becoming the reporter, so
  // the rollout covers clusters other replicas recorded. Null: only this process's records.
  StatusStore* branch = nullptr;
  // Resolves the schematics of proposed profiles, at the factories the watched branch names
  // (PreviewPlan). Null: a schematic profile is planned as blocked. Must be thread-safe.
  factory::FactoryInstallers* installers = nullptr;
  // The Talos releases the daemon's Image Factory marks broken now (PreviewPlan blocks them).
  // Null: none. Must be thread-safe.
  std::function<std::vector<core::Version>()> broken_releases = nullptr;
  // Whether the watched branch has a profile (valid or not) for a cluster. The status of one it
  // has not — a file planted on the status branch — judges no rollout and is not shown. Null:
  // every cluster counts. Must be thread-safe.
  std::function<bool(const std::string& cluster)> knows_cluster = nullptr;
  // The recorded statuses (the status branch), read for each plan: the drain forecast shows
  // how long the clusters' earlier rollouts took. Null: no durations shown.
  StatusStore* history = nullptr;
};

class PullRequestFlow {
 public:
  // Every reference must outlive the flow. The worker waits for work through `env`, which also
  // times the plans (PreviewPlan's).
  PullRequestFlow(gitsource::GitSource& source, gitsource::PreviewSource& previews,
                  forge::ForgeApi& api, PullRequestComments& comments, Env& env,
                  PullRequestFlowOptions options);
  ~PullRequestFlow();  // stops the worker; what is queued is dropped
  PullRequestFlow(const PullRequestFlow&) = delete;
  PullRequestFlow& operator=(const PullRequestFlow&) = delete;

  // A verified pull-request webhook (IsRelevant): plans it, or remembers its merge.
  void PullRequestChanged(const forge::WebhookEvent& event);
  // A cluster's status was recorded durably (a rollout's progress).
  void StatusRecorded(const core::ClusterStatus& status);
  // The statuses recorded before this process started: known clusters, no progress to report.
  void StatusesLoaded(const std::map<std::string, core::ClusterStatus>& statuses);
  // Re-reads `branch` (when reporting) and reports what changed there, as if recorded here.
  void Refresh();
  // Whether nothing is queued or running (for tests and an orderly stop).
  bool Idle();

 private:
  struct Rollout {
    std::optional<int64_t> pull_request;
    bool looked_up = false;
    std::string reported;     // the last rollout state sent: "", pending, success, failure, ...
    bool plan_read = false;   // the comment was read back (once per reporting stint)
    bool final = false;       // its final state was sent: it is never reported again
    uint64_t rank = 0;        // its merge order (MergedChange::rank)
    SettledClusters settled;  // clusters whose outcome an earlier verdict settled
  };

  void Run(std::stop_token stop);
  // Adds the statuses on the branch that differ from clusters_ to `recorded`.
  void ReadBranch(std::map<std::string, core::ClusterStatus>& recorded, std::stop_token stop);
  // This replica just became the reporter: forgets what it sent and adds every commit its
  // clusters are on to `commits`, so their rollouts are reported again.
  void TakeOver(std::set<std::string>& commits);
  // Takes the statuses loaded at start (StatusesLoaded) as the clusters' latest.
  void Load();
  // Forgets the statuses of clusters options_.knows_cluster does not know (one warning).
  void DropUnknownClusters();
  void Plan(const forge::WebhookEvent& event, std::stop_token stop);
  // The head is past a preview limit (FailedPrecondition naming it): a failing plan status
  // and a comment saying so, nothing planned.
  void RefuseOverBudget(const forge::WebhookEvent& event, const absl::Status& why,
                        std::stop_token stop);
  // The pull request closed or merged: its preview ref goes from the mirror.
  void DropPreview(const forge::WebhookEvent& event);
  // Progress() of each of `commits`, the newest merge first: a change's pull request is then
  // known before an earlier change is judged superseded by it or not.
  void ReportNewestFirst(const std::set<std::string>& commits, std::stop_token stop);
  void Progress(const std::string& commit, std::stop_token stop);
  // The merged changes known, sorted by rank, for JudgeRollout.
  std::vector<MergedChange> History() const;
  std::string RolloutSection(const std::string& commit, const RolloutVerdict& verdict);
  // The plan part of pull request `number`'s comment: remembered, else (or when `read_back`)
  // read back from the forge, with the scope it names into scopes_, so the rollout report
  // does not replace it; the remembered one, or empty, when the read fails or finds none.
  // When it reads the comment, `whole` (if given) receives all of it.
  std::string PlanOf(int64_t number, bool read_back, std::stop_token stop,
                     std::string* whole = nullptr);
  // What the pull request's comment (`comment`, read back) says of `commit`'s rollout: true
  // when its report is final already (then `rollout` is marked so); else the clusters it
  // settled go into `rollout`.
  bool Recall(const std::string& comment, const std::string& commit, Rollout& rollout);
  // Notes `commit` (once) in rollouts_ and rollout_order_, ranked after every commit noted
  // before it; TrackAt with the rank given.
  void Track(const std::string& commit);
  void TrackAt(const std::string& commit, uint64_t rank);
  // Forgets the oldest pull requests and merge commits beyond kMaxTracked.
  void Trim();

  gitsource::GitSource& source_;
  gitsource::PreviewSource& previews_;
  forge::ForgeApi& api_;
  PullRequestComments& comments_;
  Env& env_;
  const PullRequestFlowOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  // Worker-only state (never touched under mu_ from other threads).
  std::map<int64_t, std::string> plans_;                 // pull request -> its plan markdown
  std::map<int64_t, std::set<std::string>> scopes_;      // pull request -> clusters it changes
  std::map<std::string, int64_t> merged_;                // merge commit -> pull request
  std::map<std::string, Rollout> rollouts_;              // merge commit -> its report
  std::map<std::string, core::ClusterStatus> clusters_;  // latest status of every cluster
  std::deque<std::string> rollout_order_;                // merge commits, first noted first
  uint64_t next_rank_ = 3;                               // above the ranks of what Load() notes
  bool reporting_ = false;                               // as `reports` said last

  Mutex mu_;
  std::condition_variable_any cv_;
  static constexpr std::size_t kMaxQueuedEvents = 256;
  PullRequestEventQueue events_ ABSL_GUARDED_BY(mu_){kMaxQueuedEvents};
  std::map<std::string, core::ClusterStatus> recorded_ ABSL_GUARDED_BY(mu_);  // not yet seen
  std::map<std::string, core::ClusterStatus> loaded_ ABSL_GUARDED_BY(mu_);    // not yet seen
  bool refresh_ ABSL_GUARDED_BY(mu_) = false;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  std::jthread thread_;  // last: stops before the members it uses go
};

// A StatusStore that tells a PullRequestFlow what it loaded and, after each successful record,
// what was recorded. Thread-safe; never waits on the forge.
class ReportingStatusStore final : public StatusStore {
 public:
  // `inner` and `flow` must outlive this store.
  ReportingStatusStore(StatusStore& inner, PullRequestFlow& flow) : inner_(inner), flow_(flow) {}
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(std::stop_token stop) override;
  absl::Status Record(const core::ClusterStatus& status, std::stop_token stop) override;
  absl::Status RecordSoon(const core::ClusterStatus& status, std::stop_token stop) override;

 private:
  StatusStore& inner_;
  PullRequestFlow& flow_;
};

}  // namespace tr::reconciler::pull_requests
