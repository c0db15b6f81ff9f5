#include "gitsource/git_source.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <vector>

#include "fmt/format.h"
#include "gitsource/commit_snapshot.h"
#include "gitsource/mirror.h"

namespace tr::gitsource {
namespace {

// The ref of the mirror that keeps a preview's objects: refs/previews/pull/7/head.
absl::StatusOr<std::string> KeptPreviewRef(const std::string& remote_ref) {
  static const std::regex kPreviewRef("refs/(pull|merge-requests)/[0-9]{1,12}/head");
  if (!std::regex_match(remote_ref, kPreviewRef)) {
    return absl::InvalidArgumentError(fmt::format("'{}' is no pull request head", remote_ref));
  }
  return "refs/previews/" + remote_ref.substr(std::string("refs/").size());
}

// The pull request number of a kept preview ref ("refs/previews/pull/7/head": 7).
int64_t PreviewNumber(const std::string& kept) {
  const size_t end = kept.rfind("/head");
  const size_t start = kept.rfind('/', end - 1) + 1;
  return std::strtoll(kept.c_str() + start, nullptr, 10);
}

int CollectRefName(const char* name, void* names) {
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}

// Deletes the lowest-numbered refs/previews/ refs beyond `max`, never `keep`.
void TrimPreviews(const Mirror& mirror, git_repository* repo, const std::string& keep,
                  size_t max) {
  std::vector<std::string> kept;
  if (git_reference_foreach_glob(repo, "refs/previews/*", CollectRefName, &kept) < 0) return;
  if (kept.size() <= max) return;
  std::sort(kept.begin(), kept.end(), [](const std::string& a, const std::string& b) {
    return PreviewNumber(a) < PreviewNumber(b);
  });
  size_t excess = kept.size() - max;
  for (const std::string& ref : kept) {
    if (excess == 0) break;
    if (ref == keep) continue;
    if (mirror.DeleteRef(repo, ref).ok()) --excess;
  }
}

absl::StatusOr<git_oid> ParseCommitId(std::string_view commit) {
  git_oid id;
  if (commit.size() != GIT_OID_HEXSZ || git_oid_fromstrn(&id, commit.data(), commit.size()) != 0) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' is not a full commit id", commit.substr(0, 64)));
  }
  return id;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LibGitSource>> LibGitSource::Open(GitSourceConfig config, Env& env) {
  EnsureLibgit2();
  int valid = 0;
  const std::string ref = fmt::format("refs/heads/{}", config.branch);
  if (config.branch.empty() || config.branch.front() == '-' ||
      git_reference_name_is_valid(&valid, ref.c_str()) != 0 || !valid) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' is not a valid branch name", config.branch));
  }
  if (config.snapshot_limits.max_files == 0 || config.preview_limits.max_files == 0) {
    return absl::InvalidArgumentError("the profile file cap must be positive");
  }
  absl::StatusOr<std::shared_ptr<Mirror>> mirror =
      Mirror::Open(config.state_dir, config.remote, env);
  if (!mirror.ok()) return mirror.status();
  return std::unique_ptr<LibGitSource>(new LibGitSource(std::move(config), *std::move(mirror)));
}

const std::vector<std::string>& LibGitSource::mirror_repairs() const {
  return mirror_->repaired();
}

absl::StatusOr<RemoteHead> LibGitSource::Poll(std::stop_token stop) {
  MutexLock lock(poll_mu_);
  // The first round that starts after this call; a round already running may have listed
  // the remote's refs before our caller's reason to poll (a push) happened.
  std::uint64_t wanted = rounds_started_ + 1;
  while (true) {
    if (rounds_finished_ >= wanted) {
      const absl::StatusOr<RemoteHead>& result = *last_poll_;
      // Another caller's cancellation is not ours: run a round of our own.
      if (!result.ok() && absl::IsCancelled(result.status()) && !stop.stop_requested()) {
        wanted = rounds_started_ + 1;
        continue;
      }
      return result;
    }
    if (!polling_) {
      polling_ = true;
      ++rounds_started_;
      lock.unlock();
      absl::StatusOr<RemoteHead> result = PollOnce(stop);
      lock.lock();
      polling_ = false;
      rounds_finished_ = rounds_started_;
      last_poll_ = std::move(result);
      poll_done_.notify_all();
      continue;
    }
    if (!poll_done_.wait(lock, stop, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(poll_mu_) {
          return !polling_ || rounds_finished_ >= wanted;
        })) {
      return absl::CancelledError("the poll was cancelled");
    }
  }
}

absl::StatusOr<RemoteHead> LibGitSource::PollOnce(std::stop_token stop) {
  absl::StatusOr<SyncResult> sync;
  {
    std::shared_lock shared(mirror_->lock());
    absl::StatusOr<RepositoryPtr> repo = mirror_->Repository();
    if (!repo.ok()) return repo.status();
    sync = mirror_->SyncBranch(repo->get(), config_.branch, std::move(stop));
  }
  if (!sync.ok()) return sync.status();
  if (!sync->remote_tip.has_value()) {
    return absl::NotFoundError(fmt::format("branch '{}' does not exist on {}", config_.branch,
                                           mirror_->remote().display_url()));
  }
  // On the mirror's own thread: the commit fetched is not held up by it. It waits for a poll
  // that brought nothing new, so that it competes with no rollout for the CPU; a poll that
  // brings a commit asks for one only past twice as many packs.
  mirror_->RequestCompaction(
      sync->fetched ? 2 * config_.max_mirror_packs : config_.max_mirror_packs,
      sync->fetched ? Mirror::Pace::kBusy : Mirror::Pace::kQuiet);
  return RemoteHead{OidHex(*sync->remote_tip), sync->fetched, sync->received_bytes};
}

absl::StatusOr<ProfileSnapshot> LibGitSource::Snapshot(std::string_view commit) {
  absl::StatusOr<git_oid> id = ParseCommitId(commit);
  if (!id.ok()) return id.status();
  std::shared_lock shared(mirror_->lock());
  absl::StatusOr<RepositoryPtr> repo = mirror_->Repository();
  if (!repo.ok()) return repo.status();
  std::string signer;
  if (config_.verify_signatures.has_value()) {
    absl::StatusOr<SignatureVerdict> verdict =
        VerifyCommitSignature(repo->get(), *id, *config_.verify_signatures);
    if (!verdict.ok()) return verdict.status();
    signer = fmt::format("{} ({})", verdict->principals, verdict->fingerprint);
  }
  absl::StatusOr<ProfileSnapshot> snapshot =
      ReadCommitSnapshot(repo->get(), *id, config_.snapshot_limits);
  if (snapshot.ok()) snapshot->origin.signer = std::move(signer);
  return snapshot;
}

absl::StatusOr<ProfileSnapshot> LibGitSource::FetchPreview(const std::string& remote_ref,
                                                         std::stop_token stop) {
  absl::StatusOr<std::string> kept = KeptPreviewRef(remote_ref);
  if (!kept.ok()) return kept.status();
  std::shared_lock shared(mirror_->lock());
  absl::StatusOr<RepositoryPtr> repo = mirror_->Repository();
  if (!repo.ok()) return repo.status();
  absl::StatusOr<SyncResult> sync = mirror_->remote().Sync(
      repo->get(), remote_ref, std::move(stop), PreviewFetchBytes(config_.preview_limits));
  if (!sync.ok()) return sync.status();
  if (!sync->remote_tip.has_value()) {
    return absl::NotFoundError(
        fmt::format("'{}' does not exist on {}", remote_ref, mirror_->remote().display_url()));
  }
  // A ref keeps the objects through compaction, which packs only what refs reach.
  if (absl::Status s = mirror_->SetRef(repo->get(), *kept, *sync->remote_tip); !s.ok()) return s;
  absl::StatusOr<ProfileSnapshot> snapshot =
      ReadCommitSnapshot(repo->get(), *sync->remote_tip, config_.preview_limits);
  // A head past a limit is never read again: let compaction drop its objects at once.
  if (absl::IsFailedPrecondition(snapshot.status())) {
    (void)mirror_->DeleteRef(repo->get(), *kept);
  }
  TrimPreviews(*mirror_, repo->get(), *kept, config_.max_kept_previews);
  return snapshot;
}


absl::Status LibGitSource::DropPreview(const std::string& remote_ref) {
  absl::StatusOr<std::string> kept = KeptPreviewRef(remote_ref);
  if (!kept.ok()) return kept.status();
  std::shared_lock shared(mirror_->lock());
  absl::StatusOr<RepositoryPtr> repo = mirror_->Repository();
  if (!repo.ok()) return repo.status();
  return mirror_->DeleteRef(repo->get(), *kept);
}

}  // namespace tr::gitsource
