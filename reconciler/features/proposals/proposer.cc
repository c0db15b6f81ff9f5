#include "reconciler/features/proposals/proposer.h"

#include "core/profile_edit.h"
#include "fmt/format.h"
#include "reconciler/runtime/windows.h"

namespace tr::reconciler::proposals {
namespace {

constexpr std::string_view kMarkerStart = "<!-- talos-reconciler:proposal ";

std::string VersionOrDash(const std::optional<core::VersionChange>& change) {
  return change ? change->to.ToString() : "-";
}

std::string ChangeCell(const std::optional<core::VersionChange>& change) {
  if (!change) return "unchanged";
  return fmt::format("{} → {}", change->from.ToString(), change->to.ToString());
}

// What every node of the cluster ran at its last record, when they agree.
core::RunningVersions RunningOfStatus(const core::ClusterStatus& status) {
  std::optional<std::string> talos;
  std::optional<std::string> kubelet;
  for (const core::NodeStatus& node : status.nodes) {
    if (node.talos.empty() || node.kubelet.empty()) return {};
    if ((talos && *talos != node.talos) || (kubelet && *kubelet != node.kubelet)) return {};
    talos = node.talos;
    kubelet = node.kubelet;
  }
  if (!talos) return {};
  absl::StatusOr<core::Version> t = core::ParseTalosVersion(*talos);
  absl::StatusOr<core::Version> k = core::ParseKubernetesVersion(*kubelet);
  if (!t.ok() || !k.ok()) return {};
  return {.talos = *t, .kubernetes = *k};
}

const core::SourceFile* FindFile(const std::vector<core::SourceFile>& files,
                                 const std::string& path) {
  for (const core::SourceFile& f : files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

// The proposal's files: `files` with each proposed cluster's versions rewritten.
absl::StatusOr<std::vector<core::SourceFile>> ProposedFiles(
    const core::Proposal& proposal, const std::vector<core::SourceFile>& files) {
  std::vector<core::SourceFile> proposed = files;
  for (const core::ProposedCluster& c : proposal.clusters) {
    auto it = std::find_if(proposed.begin(), proposed.end(),
                           [&](const core::SourceFile& f) { return f.path == c.file; });
    if (it == proposed.end()) return absl::NotFoundError(c.file + " is not in the checkout");
    absl::StatusOr<std::string> content =
        core::SetProfileVersions(it->content, c.talos ? std::optional(c.talos->to) : std::nullopt,
                                 c.kubernetes ? std::optional(c.kubernetes->to) : std::nullopt);
    if (!content.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: {}", c.file, std::string(content.status().message())));
    }
    it->content = *std::move(content);
  }
  return proposed;
}

const forge::ForgePull* Newest(const std::vector<forge::ForgePull>& pulls, std::string_view state) {
  for (const forge::ForgePull& p : pulls) {
    if (state.empty() || p.state == state) return &p;
  }
  return nullptr;
}

}  // namespace

std::string ProposalMarker(const core::Proposal& proposal) {
  return fmt::format("{}group={} talos={} kubernetes={} -->", kMarkerStart, proposal.group,
                     VersionOrDash(proposal.talos), VersionOrDash(proposal.kubernetes));
}

std::string ProposalBody(const core::Proposal& proposal, const std::string& plan_markdown) {
  std::string body = ProposalMarker(proposal) + "\n";
  body += fmt::format(
      "talos-reconciler proposes this upgrade within the repository's `updates` policy "
      "(group `{}`: {}). Merging it is the decision: the watched branch then rolls out as for "
      "any change, and `spec.promotion` carries each cluster after the ones it follows, soak "
      "included.\n\n",
      proposal.group, fmt::join(proposal.group_clusters, " → "));
  body += "| cluster | profile | Talos | Kubernetes |\n|---|---|---|---|\n";
  for (const core::ProposedCluster& c : proposal.clusters) {
    body += fmt::format("| {} | `{}` | {} | {} |\n", c.name, c.file, ChangeCell(c.talos),
                        ChangeCell(c.kubernetes));
  }
  std::vector<std::string> notes;
  if (proposal.talos) {
    notes.push_back(
        fmt::format("[Talos {0}](https://github.com/siderolabs/talos/releases/tag/v{0})",
                    proposal.talos->to.ToString()));
  }
  if (proposal.kubernetes) {
    notes.push_back(
        fmt::format("[Kubernetes {0}](https://github.com/kubernetes/kubernetes/releases/tag/v{0})",
                    proposal.kubernetes->to.ToString()));
  }
  body += fmt::format("\nRelease notes: {}\n", fmt::join(notes, ", "));
  if (!plan_markdown.empty()) body += "\n" + plan_markdown;
  return body;
}

Proposer::Proposer(ProposerDeps deps, ProposerOptions options)
    : deps_(std::move(deps)), options_(std::move(options)), log_(ModuleLogger("propose")) {}

void Proposer::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    for (const std::string& line : RunOnce(stop)) log_->info("step=propose {}", line);
    // Before the first poll there is nothing to propose from: look again soon.
    const bool polled = deps_.desired.Current() != nullptr;
    const std::chrono::milliseconds wait =
        polled ? options_.interval
               : std::min<std::chrono::milliseconds>(options_.interval, std::chrono::seconds(1));
    if (!deps_.env.SleepFor(wait, stop)) return;
  }
}

core::KnownReleases Proposer::Releases(const core::ProfileSet& set, core::TimePoint now) {
  core::KnownReleases known = core::CatalogReleases(set.release_catalog, core::TimePoint{});
  if (deps_.releases != nullptr) {
    for (const core::Version& v : deps_.releases->Known()) {
      auto [it, inserted] = first_seen_.emplace(v.ToString(), now);
      known.talos.push_back({v, it->second});
    }
    const std::vector<core::Version> broken = deps_.releases->Broken();
    known.broken_talos.insert(known.broken_talos.end(), broken.begin(), broken.end());
  }
  return known;
}

bool Proposer::ScheduleDue(const core::Proposal& proposal, core::TimePoint now) const {
  if (!proposal.schedule) return true;
  const core::TimePoint since = last_pass_.value_or(now - options_.interval);
  return ScheduleFiresBetween(*proposal.schedule, since, now);
}

std::vector<std::string> Proposer::RunOnce(std::stop_token stop) {
  std::vector<std::string> lines;
  if (deps_.proposes && !deps_.proposes()) {
    if (deps_.board != nullptr) deps_.board->Set({});  // the replica that proposes shows them
    return lines;
  }
  std::shared_ptr<const DesiredSnapshot> desired = deps_.desired.Current();
  if (!desired) return lines;
  const core::ProfileSet& set = desired->profiles;
  if (!set.invalid.empty() || !set.defaults_diagnostics.empty()) {
    lines.push_back("result=skipped reason=\"a profile or reconciler.yaml is invalid\"");
    return lines;
  }
  const core::TimePoint now = deps_.env.Now();
  auto statuses = deps_.statuses.LoadAll(stop);
  if (!statuses.ok()) {
    lines.push_back(
        fmt::format("result=failed error={}", LogValue(std::string(statuses.status().message()))));
    return lines;
  }
  std::map<std::string, core::RunningVersions> running;
  for (const auto& [name, status] : *statuses) running[name] = RunningOfStatus(status);
  const core::ProposalOutcome outcome = core::ProposeUpdates(set, Releases(set, now), running, now);
  for (const core::ProposalSkip& s : outcome.skipped) {
    lines.push_back(fmt::format("group={} result=none reason={}", s.group, LogValue(s.reason)));
  }
  std::optional<std::vector<core::SourceFile>> files;
  std::map<std::string, core::ProposalRef> shown_by_cluster;
  for (const core::Proposal& p : outcome.proposals) {
    if (!ScheduleDue(p, now)) {
      lines.push_back(fmt::format("branch={} result=waiting reason=\"schedule {}\"", p.branch,
                                  p.schedule->cron.text()));
      continue;
    }
    if (!files) {
      absl::StatusOr<gitsource::ProfileSnapshot> snapshot = deps_.source.Snapshot(desired->commit);
      if (!snapshot.ok()) {
        lines.push_back(fmt::format("result=failed error={}",
                                    LogValue(std::string(snapshot.status().message()))));
        return lines;
      }
      files = std::move(snapshot->files);
    }
    std::optional<core::ProposalRef> shown;
    lines.push_back(
        fmt::format("branch={} {}", p.branch, Propose(p, desired->commit, *files, stop, shown)));
    for (const core::ProposedCluster& c : p.clusters) {
      if (!shown) continue;
      core::ProposalRef ref = *shown;
      ref.talos = c.talos ? c.talos->to.ToString() : "";
      ref.kubernetes = c.kubernetes ? c.kubernetes->to.ToString() : "";
      shown_by_cluster[c.name] = std::move(ref);
    }
  }
  if (deps_.board != nullptr) deps_.board->Set(std::move(shown_by_cluster));
  last_pass_ = now;
  CountPullStates(stop);
  return lines;
}

std::string Proposer::Propose(const core::Proposal& proposal, const std::string& base_commit,
                              const std::vector<core::SourceFile>& files, std::stop_token stop,
                              std::optional<core::ProposalRef>& shown) {
  absl::StatusOr<std::vector<core::SourceFile>> proposed = ProposedFiles(proposal, files);
  if (!proposed.ok()) {
    return fmt::format("result=failed error={}",
                       LogValue(std::string(proposed.status().message())));
  }
  std::vector<forge::ForgePull> pulls;
  if (deps_.forge != nullptr) {
    absl::StatusOr<std::vector<forge::ForgePull>> found =
        deps_.forge->PullsFromBranch(proposal.branch, stop);
    if (!found.ok()) {
      return fmt::format("result=failed error={}", LogValue(std::string(found.status().message())));
    }
    pulls = *std::move(found);
    const std::string marker = ProposalMarker(proposal);
    const forge::ForgePull* open = Newest(pulls, "open");
    for (const forge::ForgePull& p : pulls) {
      if (open != nullptr || !p.body.starts_with(marker)) continue;
      if (p.state == "closed") {
        pull_states_[proposal.branch] = "closed";
        return fmt::format(
            "result=declined pull={} reason=\"closed without merge; these "
            "versions are not proposed again\"",
            p.number);
      }
      // Merged, but this pass read the watched branch before the merge reached it: opening
      // the same proposal again would ask for a change already made.
      if (p.state == "merged") {
        pull_states_[proposal.branch] = "merged";
        return fmt::format(
            "result=merged pull={} reason=\"merged; waiting for the watched branch to "
            "include it\"",
            p.number);
      }
    }
  }
  gitsource::ProposalCommit commit{
      .branch = proposal.branch,
      .base_commit = base_commit,
      .files = {},
      .message = proposal.title + "\n\n" + ProposalMarker(proposal) + "\n"};
  for (const core::ProposedCluster& c : proposal.clusters) {
    commit.files[c.file] = FindFile(*proposed, c.file)->content;
  }
  absl::StatusOr<gitsource::ProposalPush> pushed = deps_.publisher.Publish(commit, stop);
  if (!pushed.ok()) {
    return fmt::format("result=failed error={}", LogValue(std::string(pushed.status().message())));
  }
  const std::string branch_result =
      fmt::format("commit={} pushed={}", pushed->commit.substr(0, 12), pushed->created);
  if (deps_.forge == nullptr) {
    shown = core::ProposalRef{.branch = proposal.branch};
    return branch_result + " pull=none reason=\"no --forge\"";
  }
  return branch_result + " " + OpenOrEdit(proposal, pulls, *proposed, files, stop, shown);
}

std::string Proposer::OpenOrEdit(const core::Proposal& proposal,
                                 const std::vector<forge::ForgePull>& pulls,
                                 const std::vector<core::SourceFile>& proposed,
                                 const std::vector<core::SourceFile>& trusted, std::stop_token stop,
                                 std::optional<core::ProposalRef>& shown) {
  const std::string body = ProposalBody(proposal, deps_.plan ? deps_.plan(proposed, trusted) : "");
  pull_states_[proposal.branch] = "open";
  if (const forge::ForgePull* open = Newest(pulls, "open")) {
    shown = core::ProposalRef{
        .branch = proposal.branch, .pull_request = open->number, .url = open->url};
    if (open->title == proposal.title && open->body == body) {
      return fmt::format("pull={} result=unchanged", open->number);
    }
    if (absl::Status s = deps_.forge->EditPull(open->number, proposal.title, body, stop); !s.ok()) {
      return fmt::format("pull={} result=failed error={}", open->number,
                         LogValue(std::string(s.message())));
    }
    return fmt::format("pull={} result=updated", open->number);
  }
  absl::StatusOr<forge::ForgePull> created =
      deps_.forge->CreatePull({.head_branch = proposal.branch,
                               .base_branch = options_.base_branch,
                               .title = proposal.title,
                               .body = body,
                               .labels = options_.labels},
                              stop);
  if (!created.ok()) {
    pull_states_.erase(proposal.branch);
    return fmt::format("result=failed error={}", LogValue(std::string(created.status().message())));
  }
  shown = core::ProposalRef{
      .branch = proposal.branch, .pull_request = created->number, .url = created->url};
  return fmt::format("pull={} result=opened", created->number);
}

void Proposer::CountPullStates(std::stop_token stop) {
  if (deps_.forge == nullptr) return;
  std::map<std::string, int> counts{{"open", 0}, {"merged", 0}, {"closed", 0}};
  for (auto& [branch, state] : pull_states_) {
    if (state == "open") {  // a proposal no longer made may have been merged or closed since
      absl::StatusOr<std::vector<forge::ForgePull>> pulls =
          deps_.forge->PullsFromBranch(branch, stop);
      if (pulls.ok() && !pulls->empty()) state = pulls->front().state;
    }
    counts[state] += 1;
  }
  for (const auto& [state, count] : counts) deps_.metrics.proposals.Set(state, count);
}

}  // namespace tr::reconciler::proposals
