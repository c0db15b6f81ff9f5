#include "gitsource/proposal_branch.h"

#include <git2.h>

#include <algorithm>
#include <fstream>

#include "fmt/format.h"
#include "gitsource/git_source.h"
#include "gitsource/libgit2_util.h"
#include "gitsource/mirror.h"
#include "gitsource/status_refspec.h"
#include "gitsource/status_tree.h"

namespace tr::gitsource {
namespace {

// Whether `tip` is the reconciler's proposal of `tree` on `base`: one parent, that base,
// that tree.
bool HoldsProposal(git_commit* tip, const git_oid& base, const git_oid& tree) {
  return git_commit_parentcount(tip) == 1 && git_oid_equal(git_commit_parent_id(tip, 0), &base) &&
         git_oid_equal(git_commit_tree_id(tip), &tree);
}

// The commit ids in `file`, one per line; lines that are no full id are skipped (the file is
// the reconciler's own, but a bad line must not make a stranger's commit "ours").
std::deque<std::string> ReadRecord(const std::filesystem::path& file, size_t keep) {
  std::deque<std::string> ids;
  if (file.empty()) return ids;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const bool hex = line.size() == GIT_OID_HEXSZ &&
                     line.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (hex) ids.push_back(line);
    if (ids.size() > keep) ids.pop_front();
  }
  return ids;
}

}  // namespace

GitProposalPublisher::GitProposalPublisher(const LibGitSource& source, std::string status_branch,
                                           ProposalIdentity identity, Env& env,
                                           std::filesystem::path record_file)
    : mirror_(source.mirror()),
      desired_branch_(source.branch()),
      status_branch_(std::move(status_branch)),
      identity_(std::move(identity)),
      env_(env),
      record_file_(std::move(record_file)),
      written_(ReadRecord(record_file_, kRecorded)) {}

absl::StatusOr<ProposalPush> GitProposalPublisher::Publish(const ProposalCommit& proposal,
                                                           std::stop_token stop) {
  absl::StatusOr<std::string> refspec =
      ProposalPushRefspec(proposal.branch, desired_branch_, status_branch_);
  if (!refspec.ok()) return refspec.status();
  git_oid base;
  if (git_oid_fromstr(&base, proposal.base_commit.c_str()) < 0) {
    return absl::InvalidArgumentError(fmt::format("'{}' is no commit id", proposal.base_commit));
  }
  std::shared_lock shared(mirror_->lock());
  absl::StatusOr<RepositoryPtr> repo = mirror_->Repository();
  if (!repo.ok()) return repo.status();
  StatusCommitSpec spec{base, {}, identity_.name, identity_.email, env_.Now(), proposal.message};
  for (const auto& [path, content] : proposal.files) spec.files.emplace(path, content);
  absl::StatusOr<std::optional<git_oid>> commit = CreateStatusCommit(repo->get(), spec);
  if (!commit.ok()) return commit.status();
  if (!commit->has_value()) {
    return absl::FailedPreconditionError("the proposal changes nothing on its base commit");
  }
  absl::StatusOr<CommitPtr> built = LookupCommit(repo->get(), **commit);
  if (!built.ok()) return built.status();
  const git_oid tree = *git_commit_tree_id(built->get());
  absl::StatusOr<SyncResult> remote = mirror_->SyncBranch(repo->get(), proposal.branch, stop);
  if (!remote.ok()) return remote.status();
  if (remote->remote_tip) {
    absl::StatusOr<CommitPtr> tip = LookupCommit(repo->get(), *remote->remote_tip);
    if (!tip.ok()) return tip.status();
    if (HoldsProposal(tip->get(), base, tree)) {
      return ProposalPush{OidHex(*remote->remote_tip), false};
    }
    if (!Wrote(OidHex(*remote->remote_tip))) {
      return absl::FailedPreconditionError(
          fmt::format("{} has a commit the reconciler did not write ({}); it is left as it is",
                      proposal.branch, OidHex(*remote->remote_tip)));
    }
  }
  if (absl::Status s = mirror_->SetRef(repo->get(), std::string(kProposalOutgoingRef), **commit);
      !s.ok()) {
    return s;
  }
  PushRequest push{proposal.branch, desired_branch_, *refspec, remote->remote_tip, **commit};
  push.force_with_lease = true;
  push.proposal_status_branch = status_branch_;
  absl::StatusOr<PushOutcome> outcome = mirror_->remote().Push(repo->get(), push, stop);
  if (!outcome.ok()) return outcome.status();
  if (!outcome->accepted) {
    return absl::AbortedError(
        fmt::format("the push of {} was rejected: {}", proposal.branch, outcome->rejection));
  }
  Record(OidHex(**commit));
  return ProposalPush{OidHex(**commit), true};
}

bool GitProposalPublisher::Wrote(const std::string& commit) const {
  MutexLock lock(mu_);
  return std::find(written_.begin(), written_.end(), commit) != written_.end();
}

void GitProposalPublisher::Record(const std::string& commit) {
  MutexLock lock(mu_);
  written_.push_back(commit);
  while (written_.size() > kRecorded) written_.pop_front();
  if (record_file_.empty()) return;
  // Written aside and renamed over, so a crash leaves the old record or the new one whole.
  const std::filesystem::path aside = record_file_.string() + ".new";
  {
    std::ofstream out(aside, std::ios::trunc);
    for (const std::string& id : written_) out << id << "\n";
    if (!out) return;  // the memory still knows; a restart leaves the branch alone, safely
  }
  std::error_code ignored;
  std::filesystem::rename(aside, record_file_, ignored);
}

}  // namespace tr::gitsource
