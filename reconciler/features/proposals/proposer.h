// The daemon's release proposals: every --propose-interval, the proposals the profiles'
// `updates` policies allow (core/proposals.h) become branches and pull requests.
//
// A pass, on the replica that proposes (with --leader-elect, the holder of shard 0):
//  - reads the watched branch's profiles (nothing is proposed while any is invalid) and what
//    each cluster runs from the status branch;
//  - knows the releases of the catalog (built in and reconciler.yaml's: old enough from the
//    start) and of the installer listing (the registry or the Image Factory), each aged from
//    the pass that first saw it (kept in memory: a restart starts those clocks again, which
//    delays a proposal, never hastens one);
//  - for each proposal whose group's schedule fired since the last pass (or every pass without
//    a schedule): the profiles with their versions rewritten (core/profile_edit.h) are pushed
//    to the group's branch on the watched branch's commit (gitsource/proposal_branch.h), and,
//    with a forge, its one pull request is opened or, when open, edited in place. A pull
//    request closed without merge for the same versions stops that proposal: it is never
//    opened again for them. The body is the plan of the proposed profiles (the same markdown as
//    the plan comment), the clusters and versions, and release-notes links, with a hidden line
//    naming the versions.
// A proposal never acts: merging it is what rolls out, through the watched branch.
//
// Thread-compatible: Run() on one thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "base/env.h"
#include "core/proposals.h"
#include "gitsource/git_source.h"
#include "gitsource/proposal_branch.h"
#include "reconciler/clients/forge/forge_client.h"
#include "reconciler/clients/releases/release_cache.h"
#include "reconciler/features/proposals/proposal_board.h"
#include "reconciler/loop/desired_state.h"
#include "reconciler/loop/status_store.h"
#include "reconciler/runtime/logging.h"
#include "reconciler/runtime/metrics.h"

namespace tr::reconciler::proposals {

// The plan of `proposed` (a proposal's files) against `trusted` (the watched branch's), as
// markdown: PreviewPlan's.
using PlanMarkdown = std::function<std::string(const std::vector<core::SourceFile>& proposed,
                                               const std::vector<core::SourceFile>& trusted)>;

struct ProposerDeps {
  const DesiredState& desired;
  gitsource::GitSource& source;  // the files of the desired commit
  StatusStore& statuses;         // the status branch as it is
  gitsource::ProposalPublisher& publisher;
  forge::ForgeApi* forge = nullptr;                       // null: branches only, logged
  const releases::ReleaseCache* releases = nullptr;  // null: the catalog only
  std::function<bool()> proposes;                         // empty: this process proposes
  PlanMarkdown plan;                                      // empty: no plan in the body
  Metrics& metrics;
  Env& env;
  ProposalBoard* board = nullptr;  // where each cluster's proposal is shown; null: nowhere
};

struct ProposerOptions {
  std::chrono::milliseconds interval{std::chrono::minutes(10)};
  std::string base_branch = "main";  // the watched branch, where pull requests merge into
  std::vector<std::string> labels{"talos-reconciler"};
};

// The hidden first line of a proposal's body, naming its versions ("-" for unchanged).
std::string ProposalMarker(const core::Proposal& proposal);
// The pull request body: marker, title, clusters, release notes, plan.
std::string ProposalBody(const core::Proposal& proposal, const std::string& plan_markdown);

class Proposer {
 public:
  Proposer(ProposerDeps deps, ProposerOptions options);

  // A pass every interval until `stop`.
  void Run(std::stop_token stop);
  // One pass; one line per proposal saying what became of it ("talos-reconciler/update/lab:
  // opened #7"), for the log and the tests.
  std::vector<std::string> RunOnce(std::stop_token stop);

 private:
  core::KnownReleases Releases(const core::ProfileSet& set, core::TimePoint now);
  bool ScheduleDue(const core::Proposal& proposal, core::TimePoint now) const;
  // What became of `proposal`; `shown` gets its reference when it stands (pushed, and with a
  // forge its pull request open).
  std::string Propose(const core::Proposal& proposal, const std::string& base_commit,
                      const std::vector<core::SourceFile>& files, std::stop_token stop,
                      std::optional<core::ProposalRef>& shown);
  // Opens or edits the branch's pull request; what happened.
  std::string OpenOrEdit(const core::Proposal& proposal, const std::vector<forge::ForgePull>& pulls,
                         const std::vector<core::SourceFile>& proposed,
                         const std::vector<core::SourceFile>& trusted, std::stop_token stop,
                         std::optional<core::ProposalRef>& shown);
  void CountPullStates(std::stop_token stop);

  ProposerDeps deps_;
  const ProposerOptions options_;
  const std::shared_ptr<spdlog::logger> log_;
  std::map<std::string, core::TimePoint> first_seen_;  // installer releases, by version
  std::optional<core::TimePoint> last_pass_;
  std::map<std::string, std::string> pull_states_;  // branch -> its newest pull request's state
};

}  // namespace tr::reconciler::proposals
