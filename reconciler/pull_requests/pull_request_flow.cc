#include "reconciler/pull_requests/pull_request_flow.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/names.h"
#include "core/status_yaml.h"
#include "reconciler/logging.h"
#include "reconciler/offline_commands.h"

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

constexpr size_t kMaxQueuedEvents = 256;
// Pull requests and merge commits remembered: a long-lived daemon must not grow with history;
// one forgotten is looked up on the forge again if it ever reports.
constexpr size_t kMaxTracked = 512;
constexpr char kRolloutHeading[] = "## Rollout of ";
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

}  // namespace

PullRequestFlow::PullRequestFlow(gitsource::GitSource& source, gitsource::PreviewSource& previews,
                                 ForgeApi& api, PullRequestComments& comments,
                                 PullRequestFlowOptions options)
    : source_(source),
      previews_(previews),
      api_(api),
      comments_(comments),
      options_(std::move(options)),
      log_(ModuleLogger("forge")),
      thread_([this](std::stop_token stop) { Run(stop); }) {}

PullRequestFlow::~PullRequestFlow() {
  thread_.request_stop();
  cv_.notify_all();
}

void PullRequestFlow::PullRequestChanged(const WebhookEvent& event) {
  {
    MutexLock lock(mu_);
    if (events_.size() >= kMaxQueuedEvents) events_.pop_front();  // the newest state wins
    events_.push_back(event);
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
    if (!cv_.wait(lock, stop, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return refresh_ || !events_.empty() || !recorded_.empty() || !loaded_.empty();
        })) {
      return;
    }
    busy_ = true;
    std::deque<WebhookEvent> events;
    events.swap(events_);
    std::map<std::string, core::ClusterStatus> recorded;
    recorded.swap(recorded_);
    const bool refresh = std::exchange(refresh_, false);
    for (auto& [cluster, status] : loaded_) clusters_.try_emplace(cluster, std::move(status));
    loaded_.clear();
    lock.unlock();
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
      }
    }
    const bool reporting = !options_.reports || options_.reports();
    const bool taking_over = reporting && !reporting_;
    reporting_ = reporting;
    if (reporting && (refresh || taking_over)) ReadBranch(recorded, stop);
    std::set<std::string> commits;
    for (auto& [cluster, status] : recorded) {
      commits.insert(status.desired_commit_attempted);
      commits.insert(status.desired_commit_applied);
      clusters_[cluster] = std::move(status);
    }
    if (taking_over) TakeOver(commits);
    for (const std::string& commit : commits) {
      if (reporting && !commit.empty()) Progress(commit, stop);
    }
    Trim();
    lock.lock();
  }
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
  const PlanPreview preview =
      PreviewPlan(proposed->files, trusted->files, options_.credentials, options_.self_node,
                  options_.kubernetes_upgrades, options_.shards, options_.installers);
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

std::string PullRequestFlow::RolloutSection(const std::string& commit, std::string_view state,
                                            const std::set<std::string>* scope) {
  std::string text = absl::StrCat(kRolloutHeading, Short(commit), ": ", std::string(state), "\n\n",
                                  "| Cluster | Phase | Talos | Kubernetes | Message |\n",
                                  "|---|---|---|---|---|\n");
  for (const auto& [name, status] : clusters_) {
    if (status.desired_commit_attempted != commit && status.desired_commit_applied != commit) {
      continue;
    }
    if (scope != nullptr && !scope->contains(name)) continue;
    absl::StrAppend(&text, "| ", name, " | ", core::ClusterPhaseName(status.phase), " | ",
                    status.talos.current, " → ", status.talos.target, " (", status.talos.progress,
                    ") | ", status.kubernetes.current, " → ", status.kubernetes.target, " | ",
                    status.message, " |\n");
  }
  return text;
}

std::string PullRequestFlow::PlanOf(int64_t number, bool read_back, std::stop_token stop) {
  auto known = plans_.find(number);
  if (known != plans_.end() && !read_back) return known->second;
  absl::StatusOr<std::optional<ForgeComment>> comment =
      api_.FindComment(number, kCommentMarker, stop);
  if (!comment.ok() || !comment->has_value()) {  // a failed read costs the plan text only
    return known != plans_.end() ? known->second : "";
  }
  std::string body = (*comment)->body;
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

void PullRequestFlow::Track(const std::string& commit) {
  if (!rollouts_.contains(commit) && !merged_.contains(commit)) rollout_order_.push_back(commit);
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

void PullRequestFlow::Progress(const std::string& commit, std::stop_token stop) {
  Track(commit);
  Rollout& rollout = rollouts_[commit];
  if (!rollout.pull_request) {
    if (auto it = merged_.find(commit); it != merged_.end()) {
      rollout.pull_request = it->second;
    } else if (!rollout.looked_up) {
      absl::StatusOr<std::optional<int64_t>> pull = api_.MergedPullOf(commit, stop);
      rollout.looked_up = pull.ok();  // a failed lookup is tried again on the next record
      if (pull.ok()) rollout.pull_request = *pull;
    }
  }
  if (!rollout.pull_request) return;  // not a merged pull request's commit
  // With several replicas another may have planned the pull request's last revision: its
  // comment, read once per rollout, has the plan and the scope.
  std::string body = PlanOf(*rollout.pull_request, options_.reports && !rollout.plan_read, stop);
  rollout.plan_read = true;
  if (!body.empty()) body += "\n\n";
  // Success once every cluster in scope applied the commit; failure once one failed on it.
  const std::set<std::string>* scope = nullptr;
  if (auto it = scopes_.find(*rollout.pull_request); it != scopes_.end() && !it->second.empty()) {
    scope = &it->second;
  }
  bool all_applied = true, failed = false;
  for (const auto& [name, status] : clusters_) {
    if (scope != nullptr && !scope->contains(name)) continue;
    all_applied = all_applied && status.desired_commit_applied == commit &&
                  status.phase == core::ClusterPhase::kReady;
    failed = failed || (status.desired_commit_attempted == commit &&
                        status.phase == core::ClusterPhase::kUpgradeFailed);
  }
  const std::string state = failed ? "failure" : all_applied ? "success" : "pending";
  comments_.Publish(*rollout.pull_request, body + RolloutSection(commit,
                                                                 failed        ? "failed"
                                                                 : all_applied ? "succeeded"
                                                                               : "in progress",
                                                                 scope));
  if (state == rollout.reported) return;
  const CommitStatus status{
      commit, kRolloutContext,
      failed        ? CommitState::kFailure
      : all_applied ? CommitState::kSuccess
                    : CommitState::kPending,
      failed        ? "The rollout failed"
      : all_applied ? (scope ? "Every cluster it changes applied it" : "Every cluster applied it")
                    : "Rolling out",
      options_.status_url};
  if (absl::Status s = api_.SetCommitStatus(status, stop); s.ok()) {
    rollout.reported = state;
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
