#include "reconciler/features/pull_requests/pull_request_flow.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/thread_name.h"
#include "core/inert_text.h"
#include "core/names.h"
#include "core/status_yaml.h"
#include "reconciler/features/plan/plan_engine.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::pull_requests {

using forge::CommitState;
using forge::CommitStateName;
using forge::CommitStatus;
using forge::ForgeApi;
using forge::ForgeComment;
using forge::PullRequestAction;
using forge::PullRequestActionName;
using forge::WebhookEvent;

namespace {

// Pull requests and merge commits remembered: a long-lived daemon must not grow with history;
// one forgotten is looked up on the forge again if it ever reports.
constexpr size_t kMaxTracked = 512;
constexpr char kRolloutHeading[] = "## Rollout of ";
// The ranks of the commits a reporter learns from the status branch at its start, below every
// commit it learns afterwards (rollout_verdict.h: equal ranks are in no known order).
constexpr uint64_t kLoadedAppliedRank = 1;
constexpr uint64_t kLoadedAttemptedRank = 2;
// The hidden line of a plan section that names the clusters the pull request changes, so the
// replica that reports the rollout knows its scope even when another replica (or an earlier
// process) planned it.
constexpr char kScopeMarker[] = "<!-- talos-reconciler:changes ";
constexpr char kMarkerEnd[] = " -->";

std::string Short(const std::string& sha) { return sha.substr(0, 12); }

std::string PlanSection(const WebhookEvent& event, const PlanPreview& preview) {
  std::vector<std::string> names;  // a name that is no DNS subdomain is in no rollout anyway
  for (const std::string& name : preview.changed) {
    if (core::CheckDns1123Subdomain(name).ok()) names.push_back(name);
  }
  std::string text = absl::StrCat(kScopeMarker, absl::StrJoin(names, " "), kMarkerEnd, "\n",
                                  "## Plan for ", Short(event.head_sha), "\n\n", preview.markdown);
  if (!preview.unobserved.empty()) {
    text += "\n\nNot observed (planned as blocked):\n";
    for (const std::string& line : preview.unobserved) text += "- " + line + "\n";
  }
  return text;
}

std::string PlanDescription(const PlanPreview& preview) {
  const std::string clusters =
      absl::StrCat(preview.changed.size(), " cluster", preview.changed.size() == 1 ? "" : "s");
  if (preview.exit_code == kExitInvalid) return "A profile is invalid: see the plan comment";
  if (preview.exit_code == kExitBlocked) return "A plan is blocked: see the plan comment";
  return "Planned " + clusters;
}

// The clusters a plan section's hidden scope line names; nullopt when it has none.
std::optional<std::set<std::string>> ScopeOf(const std::string& plan) {
  const size_t start = plan.find(kScopeMarker);
  if (start == std::string::npos) return std::nullopt;
  const size_t from = start + std::strlen(kScopeMarker);
  const size_t end = plan.find(kMarkerEnd, from);
  if (end == std::string::npos) return std::nullopt;
  std::set<std::string> scope;
  for (const auto& name : absl::StrSplit(plan.substr(from, end - from), ' ', absl::SkipEmpty())) {
    scope.emplace(name);
  }
  return scope;
}

// The rollout state a report sends for an outcome; a superseded change ends as `success`:
// commit statuses have no neutral state on GitHub or Gitea, and nothing is to be done about it
// (its clusters' rollout is reported on the pull request that superseded it).
std::string StateWord(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPending:
      return "pending";
    case Outcome::kApplied:
      return "success";
    case Outcome::kFailed:
      return "failure";
    case Outcome::kSuperseded:
      return "superseded";
  }
  return "pending";
}

CommitState CommitStateOf(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPending:
      return CommitState::kPending;
    case Outcome::kFailed:
      return CommitState::kFailure;
    case Outcome::kApplied:
    case Outcome::kSuperseded:
      return CommitState::kSuccess;
  }
  return CommitState::kPending;
}

// "#12", or the commit's short ID when no pull request merged it.
std::string ChangeName(const MergedChange& change) {
  return change.pull_request ? absl::StrCat("#", *change.pull_request) : Short(change.commit);
}

std::string VerdictWords(const RolloutVerdict& verdict) {
  switch (verdict.outcome) {
    case Outcome::kPending:
      return "in progress";
    case Outcome::kApplied:
      return "succeeded";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kSuperseded:
      return "superseded by " + ChangeName(*verdict.superseded_by);
  }
  return "in progress";
}

std::string StatusDescription(const RolloutVerdict& verdict) {
  switch (verdict.outcome) {
    case Outcome::kPending:
      return "Rolling out";
    case Outcome::kApplied:
      return "Every cluster it changes applied it";
    case Outcome::kFailed:
      return "The rollout failed";
    case Outcome::kSuperseded:
      return "Superseded by " + ChangeName(*verdict.superseded_by) +
             " before it finished: reported there";
  }
  return "Rolling out";
}

// The message of a cluster that no longer attempts the change.
std::string MovedOnMessage(const ClusterVerdict& v, const core::ClusterStatus& status) {
  const std::string now_on = Short(status.desired_commit_attempted);
  switch (v.outcome) {
    case Outcome::kApplied:
      return "applied; the cluster has moved on to " + now_on;
    case Outcome::kSuperseded:
      return "superseded by " + ChangeName(*v.superseded_by);
    case Outcome::kFailed:
      return absl::StrCat("failed on ", now_on, ": ", core::InertMarkdown(status.message));
    case Outcome::kPending:
      break;
  }
  return absl::StrCat("on ", now_on, ", ", core::ClusterPhaseName(status.phase), ": ",
                      core::InertMarkdown(status.message));
}

// The hidden line of a rollout section that names the clusters whose outcome is settled, so
// a reporter that restarts keeps them: "alpha=applied beta=superseded:<commit>:<pull request>".
constexpr char kSettledMarker[] = "<!-- talos-reconciler:settled ";

std::string SettledMarker(const RolloutVerdict& verdict) {
  std::vector<std::string> settled;
  for (const ClusterVerdict& v : verdict.clusters) {
    if (v.outcome == Outcome::kPending) continue;
    std::string entry = absl::StrCat(v.cluster, "=", std::string(OutcomeName(v.outcome)));
    if (v.superseded_by) {
      absl::StrAppend(&entry, ":", v.superseded_by->commit, ":",
                      v.superseded_by->pull_request.value_or(0));
    }
    settled.push_back(std::move(entry));
  }
  if (settled.empty()) return "";
  return absl::StrCat(kSettledMarker, absl::StrJoin(settled, " "), kMarkerEnd, "\n");
}

// The clusters a rollout section's settled line names; unknown words are left out.
SettledClusters ReadSettled(const std::string& section) {
  SettledClusters settled;
  const size_t start = section.find(kSettledMarker);
  const size_t next_heading = section.find(kRolloutHeading, 1);
  if (start == std::string::npos || start > next_heading) return settled;
  const size_t from = start + std::strlen(kSettledMarker);
  const size_t end = section.find(kMarkerEnd, from);
  if (end == std::string::npos) return settled;
  for (const auto& entry :
       absl::StrSplit(section.substr(from, end - from), ' ', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(entry, absl::ByAnyChar("=:"));
    ClusterVerdict v;
    v.cluster = parts[0];
    if (parts.size() == 2 && parts[1] == OutcomeName(Outcome::kApplied)) {
      v.outcome = Outcome::kApplied;
    } else if (parts.size() == 2 && parts[1] == OutcomeName(Outcome::kFailed)) {
      v.outcome = Outcome::kFailed;
    } else if (int64_t number = 0; parts.size() == 4 &&
                                   parts[1] == OutcomeName(Outcome::kSuperseded) &&
                                   absl::SimpleAtoi(parts[3], &number)) {
      v.outcome = Outcome::kSuperseded;
      v.superseded_by =
          MergedChange{.commit = parts[2],
                       .rank = 0,
                       .pull_request = number > 0 ? std::optional(number) : std::nullopt,
                       .scope = std::nullopt};
    } else {
      continue;
    }
    settled[v.cluster] = std::move(v);
  }
  return settled;
}

}  // namespace

PullRequestFlow::PullRequestFlow(gitsource::GitSource& source, gitsource::PreviewSource& previews,
                                 ForgeApi& api, PullRequestComments& comments, Env& env,
                                 PullRequestFlowOptions options)
    : source_(source),
      previews_(previews),
      api_(api),
      comments_(comments),
      env_(env),
      options_(std::move(options)),
      log_(ModuleLogger("forge")),
      thread_([this](std::stop_token stop) {
        NameThisThread("pull-requests");
        Run(stop);
      }) {}

PullRequestFlow::~PullRequestFlow() {
  thread_.request_stop();
  cv_.notify_all();
}

void PullRequestFlow::PullRequestChanged(const WebhookEvent& event) {
  {
    MutexLock lock(mu_);
    events_.Push(event);
  }
  cv_.notify_all();
}

void PullRequestFlow::StatusRecorded(const core::ClusterStatus& status) {
  {
    MutexLock lock(mu_);
    recorded_[status.cluster] = status;
  }
  cv_.notify_all();
}

void PullRequestFlow::StatusesLoaded(const std::map<std::string, core::ClusterStatus>& statuses) {
  {
    MutexLock lock(mu_);
    for (const auto& [cluster, status] : statuses) loaded_[cluster] = status;
  }
  cv_.notify_all();
}

void PullRequestFlow::Refresh() {
  {
    MutexLock lock(mu_);
    refresh_ = true;
  }
  cv_.notify_all();
}

bool PullRequestFlow::Idle() {
  MutexLock lock(mu_);
  return !busy_ && !refresh_ && events_.empty() && recorded_.empty() && loaded_.empty();
}

void PullRequestFlow::ReadBranch(std::map<std::string, core::ClusterStatus>& recorded,
                                 std::stop_token stop) {
  if (options_.branch == nullptr) return;
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> branch =
      options_.branch->LoadAll(stop);
  if (!branch.ok()) {  // the next refresh tries again
    log_->warn("step=read-status-branch error={}",
               LogValue(std::string(branch.status().message())));
    return;
  }
  for (auto& [cluster, status] : *branch) {
    if (recorded.contains(cluster)) continue;  // recorded here: already the latest
    auto known = clusters_.find(cluster);
    if (known != clusters_.end() &&
        (known->second == status ||
         core::RenderStatusYaml(known->second) == core::RenderStatusYaml(status))) {
      continue;  // unchanged: no forge call for an old commit
    }
    recorded[cluster] = std::move(status);
  }
}

void PullRequestFlow::TakeOver(std::set<std::string>& commits) {
  for (auto& [commit, rollout] : rollouts_) {
    rollout.reported.clear();
    rollout.plan_read = false;
  }
  for (const auto& [cluster, status] : clusters_) {
    commits.insert(status.desired_commit_attempted);
    commits.insert(status.desired_commit_applied);
  }
  log_->info("step=report-rollouts outcome=taken-over commits={}", commits.size());
}

void PullRequestFlow::Run(std::stop_token stop) {
  MutexLock lock(mu_);
  reporting_ = !options_.reports;  // a single process reports from the start: nothing to resend
  while (!stop.stop_requested()) {
    busy_ = false;
    if (!env_.Wait(cv_, lock, stop, Env::kNoDeadline, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return refresh_ || !events_.empty() || !recorded_.empty() || !loaded_.empty();
        })) {
      return;
    }
    busy_ = true;
    const std::deque<WebhookEvent> events = events_.TakeAll();
    std::map<std::string, core::ClusterStatus> recorded;
    recorded.swap(recorded_);
    const bool refresh = std::exchange(refresh_, false);
    lock.unlock();
    Load();
    bool planned = false;
    for (const WebhookEvent& event : events) {
      if (event.action == PullRequestAction::kMerged) {
        Track(event.merge_commit);
        merged_[event.merge_commit] = event.number;
      }
      if (event.action == PullRequestAction::kMerged ||
          event.action == PullRequestAction::kClosed) {
        DropPreview(event);
      } else {
        Plan(event, stop);
        planned = true;
      }
    }
    // A plan parses up to the preview budget of profiles (about 10 MiB of heap per MiB), freed
    // at once; glibc would keep those pages, and each plan would raise the resident floor.
    if (planned) malloc_trim(0);
    const bool reporting = !options_.reports || options_.reports();
    const bool taking_over = reporting && !reporting_;
    reporting_ = reporting;
    if (reporting && (refresh || taking_over)) ReadBranch(recorded, stop);
    std::set<std::string> commits;
    for (auto& [cluster, status] : recorded) {
      // A cluster applied what it applied before what it attempts: the merge order.
      Track(status.desired_commit_applied);
      Track(status.desired_commit_attempted);
      commits.insert(status.desired_commit_attempted);
      commits.insert(status.desired_commit_applied);
      clusters_[cluster] = std::move(status);
    }
    DropUnknownClusters();
    if (taking_over) TakeOver(commits);
    // A rollout still pending whose clusters all moved on is judged again at each record: it
    // may have been superseded by a later change.
    for (const auto& [commit, rollout] : rollouts_) {
      if (!rollout.final && !recorded.empty()) commits.insert(commit);
    }
    if (reporting) ReportNewestFirst(commits, stop);
    Trim();
    lock.lock();
  }
}

void PullRequestFlow::ReportNewestFirst(const std::set<std::string>& commits,
                                        std::stop_token stop) {
  for (const std::string& commit : commits) Track(commit);
  const std::vector<MergedChange> history = History();
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (commits.contains(it->commit)) Progress(it->commit, stop);
  }
}

void PullRequestFlow::DropUnknownClusters() {
  if (!options_.knows_cluster) return;
  size_t dropped = 0;
  std::string first;
  for (auto it = clusters_.begin(); it != clusters_.end();) {
    if (options_.knows_cluster(it->first)) {
      ++it;
      continue;
    }
    if (first.empty()) first = it->first;
    it = clusters_.erase(it);
    ++dropped;
  }
  if (dropped > 0) {
    log_->warn("step=read-statuses outcome=ignored reason=\"no profile\" clusters={} first={}",
               dropped, LogValue(first));
  }
}

void PullRequestFlow::Load() {
  std::map<std::string, core::ClusterStatus> loaded;
  {
    MutexLock lock(mu_);
    loaded.swap(loaded_);
  }
  // The commits they are on are tracked, so a rollout still pending is judged again at the
  // next record (one a later change superseded is then reported so). Their merge order is not
  // known: what a cluster applied ranks below what one attempts, and no more.
  for (const auto& [cluster, status] : loaded) {
    TrackAt(status.desired_commit_attempted, kLoadedAttemptedRank);
  }
  for (const auto& [cluster, status] : loaded) {
    TrackAt(status.desired_commit_applied, kLoadedAppliedRank);
  }
  for (auto& [cluster, status] : loaded) clusters_.try_emplace(cluster, std::move(status));
}

void PullRequestFlow::DropPreview(const WebhookEvent& event) {
  const std::string ref = options_.dialect->HeadRef(event.number);
  if (absl::Status s = previews_.DropPreview(ref); !s.ok()) {
    log_->warn("step=drop-preview pull-request={} error={}", event.number,
               LogValue(std::string(s.message())));
    return;
  }
  log_->info("step=drop-preview pull-request={} action={}", event.number,
             PullRequestActionName(event.action));
}

void PullRequestFlow::RefuseOverBudget(const WebhookEvent& event, const absl::Status& why,
                                       std::stop_token stop) {
  const std::string message(why.message());
  plans_[event.number] = absl::StrCat(kScopeMarker, kMarkerEnd, "\n## Plan for ",
                                      Short(event.head_sha), "\n\nNot planned: ", message, "\n");
  scopes_[event.number] = {};
  comments_.Publish(event.number, plans_[event.number]);
  // The forge caps a description (GitHub: 140 characters); the comment has the whole message.
  std::string description = "Not planned: " + message;
  if (description.size() > 140) description = description.substr(0, 137) + "...";
  const CommitStatus status{event.head_sha, kPlanContext, CommitState::kFailure, description, ""};
  if (absl::Status s = api_.SetCommitStatus(status, stop); !s.ok()) {
    log_->warn("step=plan-status pull-request={} error={}", event.number,
               LogValue(std::string(s.message())));
  }
  log_->warn("step=plan-pull-request pull-request={} outcome=over-budget error={}", event.number,
             LogValue(message));
}

void PullRequestFlow::Plan(const WebhookEvent& event, std::stop_token stop) {
  const std::string ref = options_.dialect->HeadRef(event.number);
  absl::StatusOr<gitsource::ProfileSnapshot> proposed = previews_.FetchPreview(ref, stop);
  if (absl::IsFailedPrecondition(proposed.status()) ||
      absl::IsResourceExhausted(proposed.status())) {
    // Past a preview limit or the fetch cap: the pull request is refused where its author
    // looks, and nothing of it is planned.
    return RefuseOverBudget(event, proposed.status(), stop);
  }
  absl::StatusOr<gitsource::RemoteHead> head =
      proposed.ok() ? source_.Poll(stop) : absl::StatusOr<gitsource::RemoteHead>(proposed.status());
  absl::StatusOr<gitsource::ProfileSnapshot> trusted =
      head.ok() ? source_.Snapshot(head->commit)
                : absl::StatusOr<gitsource::ProfileSnapshot>(head.status());
  if (!trusted.ok()) {
    log_->warn("step=plan-pull-request pull-request={} error={}", event.number,
               LogValue(std::string(trusted.status().message())));
    return;
  }
  if (proposed->origin.commit != event.head_sha) {
    // The head moved since the webhook; the newer webhook plans the newer head.
    log_->info("step=plan-pull-request pull-request={} outcome=head-moved", event.number);
  }
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> history =
      options_.history != nullptr ? options_.history->LoadAll(stop)
                                  : absl::StatusOr<std::map<std::string, core::ClusterStatus>>(
                                        absl::NotFoundError("no status history"));
  const PlanPreview preview = PreviewPlan(
      proposed->files, trusted->files, options_.credentials, options_.self_node, env_,
      options_.kubernetes_upgrades, options_.shards, options_.installers,
      options_.broken_releases ? options_.broken_releases() : std::vector<core::Version>{},
      history.ok() ? &*history : nullptr);
  if (!preview.refused.ok()) return RefuseOverBudget(event, preview.refused, stop);
  if (preview.changed.empty() && preview.markdown.empty()) {
    log_->info("step=plan-pull-request pull-request={} outcome=no-profile-changed", event.number);
    return;
  }
  plans_[event.number] = PlanSection(event, preview);
  scopes_[event.number] = {preview.changed.begin(), preview.changed.end()};
  comments_.Publish(event.number, plans_[event.number]);
  const CommitStatus status{
      proposed->origin.commit, kPlanContext,
      preview.exit_code == kExitOk ? CommitState::kSuccess : CommitState::kFailure,
      PlanDescription(preview), ""};
  if (absl::Status s = api_.SetCommitStatus(status, stop); !s.ok()) {
    log_->warn("step=plan-status pull-request={} error={}", event.number,
               LogValue(std::string(s.message())));
  }
  log_->info("step=plan-pull-request pull-request={} head={} clusters={} outcome={}", event.number,
             Short(proposed->origin.commit), preview.changed.size(), CommitStateName(status.state));
}

std::string PullRequestFlow::RolloutSection(const std::string& commit,
                                            const RolloutVerdict& verdict) {
  std::string text = absl::StrCat(
      kRolloutHeading, Short(commit), ": ", VerdictWords(verdict), "\n", SettledMarker(verdict),
      "\n", "| Cluster | Phase | Talos | Kubernetes | Message |\n", "|---|---|---|---|---|\n");
  for (const ClusterVerdict& v : verdict.clusters) {
    const core::ClusterStatus& status = clusters_.at(v.cluster);
    if (v.on_change) {
      absl::StrAppend(&text, "| ", v.cluster, " | ", core::ClusterPhaseName(status.phase), " | ",
                      status.talos.current, " → ", status.talos.target, " (", status.talos.progress,
                      ") | ", status.kubernetes.current, " → ", status.kubernetes.target, " | ",
                      core::InertMarkdown(status.message), " |\n");
    } else {
      text += absl::StrCat("| ", v.cluster, " | ", std::string(OutcomeName(v.outcome)),
                           " | — | — | ", MovedOnMessage(v, status), " |\n");
    }
  }
  return text;
}

std::string PullRequestFlow::PlanOf(int64_t number, bool read_back, std::stop_token stop,
                                    std::string* whole) {
  auto known = plans_.find(number);
  if (known != plans_.end() && !read_back) return known->second;
  absl::StatusOr<std::optional<ForgeComment>> comment =
      api_.FindComment(number, kCommentMarker, stop);
  if (!comment.ok() || !comment->has_value()) {  // a failed read costs the plan text only
    return known != plans_.end() ? known->second : "";
  }
  std::string body = (*comment)->body;
  if (whole != nullptr) *whole = body;
  if (size_t marker = body.find(kCommentMarker); marker != std::string::npos) {
    body.erase(0, body.find_first_not_of('\n', marker + std::strlen(kCommentMarker)));
  }
  if (size_t rollout = body.find(kRolloutHeading); rollout != std::string::npos) {
    body.resize(rollout);
  }
  while (!body.empty() && body.back() == '\n') body.pop_back();
  if (std::optional<std::set<std::string>> scope = ScopeOf(body)) scopes_[number] = *scope;
  plans_[number] = body;
  return body;
}

void PullRequestFlow::Track(const std::string& commit) { TrackAt(commit, next_rank_); }

void PullRequestFlow::TrackAt(const std::string& commit, uint64_t rank) {
  if (commit.empty() || rollouts_.contains(commit)) return;
  rollouts_[commit].rank = rank;
  if (rank == next_rank_) ++next_rank_;
  rollout_order_.push_back(commit);
}

void PullRequestFlow::Trim() {
  while (plans_.size() > kMaxTracked) plans_.erase(plans_.begin());  // the lowest numbers
  while (scopes_.size() > kMaxTracked) scopes_.erase(scopes_.begin());
  while (rollout_order_.size() > kMaxTracked) {
    rollouts_.erase(rollout_order_.front());
    merged_.erase(rollout_order_.front());
    rollout_order_.pop_front();
  }
}

bool PullRequestFlow::Recall(const std::string& comment, const std::string& commit,
                             Rollout& rollout) {
  const std::string heading = absl::StrCat(kRolloutHeading, Short(commit), ": ");
  const size_t at = comment.find(heading);
  if (at == std::string::npos) return false;  // nothing reported on this commit yet
  const size_t line_end = comment.find('\n', at);
  const std::string words = comment.substr(at + heading.size(), line_end - at - heading.size());
  if (words != VerdictWords(RolloutVerdict{})) {  // not "in progress": final
    rollout.final = true;
    log_->info("step=report-rollout commit={} outcome=final-already", Short(commit));
    return true;
  }
  rollout.settled = ReadSettled(comment.substr(at));
  return false;
}

std::vector<MergedChange> PullRequestFlow::History() const {
  std::vector<MergedChange> history;
  history.reserve(rollout_order_.size());
  for (const std::string& commit : rollout_order_) {
    const Rollout& rollout = rollouts_.at(commit);
    MergedChange change;
    change.commit = commit;
    change.rank = rollout.rank;
    change.pull_request = rollout.pull_request;
    if (auto it = merged_.find(commit); !change.pull_request && it != merged_.end()) {
      change.pull_request = it->second;
    }
    if (change.pull_request) {
      auto scope = scopes_.find(*change.pull_request);
      if (scope != scopes_.end() && !scope->second.empty()) change.scope = scope->second;
    }
    history.push_back(std::move(change));
  }
  std::stable_sort(history.begin(), history.end(),
                   [](const MergedChange& a, const MergedChange& b) { return a.rank < b.rank; });
  return history;
}

void PullRequestFlow::Progress(const std::string& commit, std::stop_token stop) {
  Track(commit);
  Rollout& rollout = rollouts_[commit];
  if (rollout.final) return;  // a final report never changes
  if (!rollout.pull_request) {
    if (auto it = merged_.find(commit); it != merged_.end()) {
      rollout.pull_request = it->second;
    } else if (!rollout.looked_up) {
      absl::StatusOr<std::optional<int64_t>> pull = api_.MergedPullOf(commit, stop);
      rollout.looked_up = pull.ok();  // a failed lookup is tried again on the next record
      if (pull.ok()) rollout.pull_request = *pull;
    }
  }
  if (!rollout.pull_request) {  // not a merged pull request's commit: nothing to report
    rollout.final = rollout.looked_up;
    return;
  }
  // The comment is read back once per rollout in a reporting stint: another replica (or an
  // earlier process) may have planned the pull request's last revision (the plan and its
  // scope), settled some clusters, or sent this rollout's final report already.
  std::string whole;
  std::string body = PlanOf(*rollout.pull_request, !rollout.plan_read, stop, &whole);
  if (!rollout.plan_read && Recall(whole, commit, rollout)) return;
  rollout.plan_read = true;
  if (!body.empty()) body += "\n\n";
  const std::vector<MergedChange> history = History();
  size_t index = 0;
  while (history[index].commit != commit) ++index;  // Track put it there
  const RolloutVerdict verdict = JudgeRollout(history, index, clusters_, rollout.settled);
  for (const ClusterVerdict& v : verdict.clusters) {
    if (v.outcome != Outcome::kPending) rollout.settled[v.cluster] = v;
  }
  const std::string state = StateWord(verdict.outcome);
  comments_.Publish(*rollout.pull_request, body + RolloutSection(commit, verdict));
  if (state == rollout.reported) {
    rollout.final = verdict.final();
    return;
  }
  const CommitStatus status{commit, kRolloutContext, CommitStateOf(verdict.outcome),
                            StatusDescription(verdict), options_.status_url};
  if (absl::Status s = api_.SetCommitStatus(status, stop); s.ok()) {
    rollout.reported = state;
    rollout.final = verdict.final();
  } else {
    log_->warn("step=rollout-status commit={} error={}", Short(commit),
               LogValue(std::string(s.message())));
  }
}

absl::StatusOr<std::map<std::string, core::ClusterStatus>> ReportingStatusStore::LoadAll(
    std::stop_token stop) {
  auto statuses = inner_.LoadAll(stop);
  if (statuses.ok()) flow_.StatusesLoaded(*statuses);
  return statuses;
}

absl::Status ReportingStatusStore::Record(const core::ClusterStatus& status, std::stop_token stop) {
  absl::Status recorded = inner_.Record(status, stop);
  if (recorded.ok()) flow_.StatusRecorded(status);
  return recorded;
}

absl::Status ReportingStatusStore::RecordSoon(const core::ClusterStatus& status,
                                              std::stop_token stop) {
  absl::Status recorded = inner_.RecordSoon(status, stop);
  if (recorded.ok()) flow_.StatusRecorded(status);
  return recorded;
}

}  // namespace tr::reconciler::pull_requests
