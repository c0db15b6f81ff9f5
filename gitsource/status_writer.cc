#include "gitsource/status_writer.h"

#include <algorithm>

#include "base/thread_name.h"
#include "fmt/format.h"
#include "gitsource/git_source.h"
#include "gitsource/mirror.h"
#include "gitsource/new_objects.h"
#include "gitsource/status_refspec.h"
#include "gitsource/status_tree.h"

namespace tr::gitsource {
namespace {

std::string CommitMessage(const std::vector<std::string>& messages,
                          const std::map<std::string, std::optional<std::string>>& files) {
  std::vector<std::string> lines;
  for (const std::string& m : messages) {
    if (!m.empty()) lines.push_back(m.substr(0, m.find('\n')));
  }
  if (lines.size() == 1) return lines.front() + "\n";
  std::string message = fmt::format("Update status ({} files)\n", files.size());
  if (!lines.empty()) message += "\n";
  for (const std::string& line : lines) message += fmt::format("- {}\n", line);
  return message;
}

}  // namespace

GitStatusWriter::GitStatusWriter(std::shared_ptr<Mirror> mirror, std::size_t max_mirror_packs,
                                 std::string desired_branch, StatusWriterConfig config,
                                 std::string refspec, Env& env)
    : mirror_(std::move(mirror)),
      max_mirror_packs_(max_mirror_packs),
      desired_branch_(std::move(desired_branch)),
      config_(std::move(config)),
      refspec_(std::move(refspec)),
      env_(env) {}

absl::StatusOr<std::unique_ptr<GitStatusWriter>> GitStatusWriter::Create(const LibGitSource& source,
                                                                         StatusWriterConfig config,
                                                                         Env& env) {
  absl::StatusOr<std::string> refspec = StatusPushRefspec(config.branch, source.branch());
  if (!refspec.ok()) return refspec.status();
  if (config.author_name.empty() || config.author_email.empty()) {
    return absl::InvalidArgumentError("the status author needs a name and an email");
  }
  if (config.backoff.max_attempts < 1) {
    return absl::InvalidArgumentError("the status writer needs at least one attempt");
  }
  return std::unique_ptr<GitStatusWriter>(
      new GitStatusWriter(source.mirror(), source.max_mirror_packs(), source.branch(),
                          std::move(config), *std::move(refspec), env));
}

absl::StatusOr<StatusCommit> GitStatusWriter::Write(StatusUpdate update, std::stop_token stop) {
  for (const auto& [path, content] : update.files) {
    if (absl::Status s = ValidateStatusPath(path); !s.ok()) return s;
  }
  MutexLock lock(mu_);
  for (auto& [path, content] : update.files) {
    pending_.files[path] = std::move(content);
    pending_.posted.erase(path);
  }
  pending_.messages.push_back(std::move(update.message));
  const std::uint64_t id = pending_id_;
  ++waiters_[id];
  const auto leave = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (--waiters_[id] == 0) {
      waiters_.erase(id);
      results_.erase(id);
    }
  };
  while (true) {
    if (auto found = results_.find(id); found != results_.end()) {
      absl::StatusOr<StatusCommit> result = found->second;
      leave();
      return result;
    }
    if (!flushing_ && pending_id_ == id) {
      CommitPending(stop);
      continue;
    }
    const bool woken = env_.Wait(flushed_, lock, stop, Env::kNoDeadline,
                                 [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
                                   return results_.contains(id) || !flushing_;
                                 });
    // Unready without a deadline means stopped; otherwise (an environment that let the lock go
    // after the wake, as the tests' simulated one does) the loop looks again.
    if (!woken && stop.stop_requested()) {
      leave();
      return absl::CancelledError("cancelled while waiting for the status commit");
    }
  }
}

absl::Status GitStatusWriter::Post(StatusUpdate update) {
  for (const auto& [path, content] : update.files) {
    if (absl::Status s = ValidateStatusPath(path); !s.ok()) return s;
  }
  MutexLock lock(mu_);
  for (auto& [path, content] : update.files) {
    pending_.files[path] = std::move(content);
    pending_.posted.insert(path);
  }
  pending_.messages.push_back(std::move(update.message));
  posted_ = true;
  if (!poster_.joinable()) {
    poster_ = std::jthread([this](std::stop_token stop) {
      NameThisThread(kPosterThreadName);
      CommitPosted(stop);
    });
  }
  // The posting thread alone: what the Writes wait for did not change.
  news_.notify_one();
  return absl::OkStatus();
}

void GitStatusWriter::CommitPosted(std::stop_token stop) {
  MutexLock lock(mu_);
  const auto news_waits = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return posted_ && !flushing_;
  };
  // A wait ends true when its predicate holds, even once stopped: the stop is checked apart.
  while (env_.Wait(news_, lock, stop, Env::kNoDeadline, news_waits) && !stop.stop_requested()) {
    if (posted_retry_at_ && *posted_retry_at_ > env_.Now()) {
      const auto wait =
          std::chrono::ceil<std::chrono::milliseconds>(*posted_retry_at_ - env_.Now());
      mu_.unlock();
      (void)env_.SleepFor(wait, stop);
      mu_.lock();
      continue;  // a Write may have taken the news along meanwhile
    }
    // News alone is held for a window, so that a Write coming meanwhile (the step after a
    // quick one) takes it along in its own push instead of waiting behind the news's.
    if (config_.coalesce_window.count() > 0) {
      mu_.unlock();
      (void)env_.SleepFor(config_.coalesce_window, stop);
      mu_.lock();
      if (stop.stop_requested() || !news_waits()) continue;
    }
    CommitPending(stop);
  }
}

void GitStatusWriter::CommitPending(std::stop_token stop) {
  flushing_ = true;
  WaitForWindow(stop);
  if (stop.stop_requested() && !waiters_.contains(pending_id_)) {
    // The posting thread stopping (the writer goes) with news alone pending: left unsent.
    EndFlushing();
    return;
  }
  Batch batch = std::exchange(pending_, Batch{});
  posted_ = false;
  const std::uint64_t id = pending_id_++;
  mu_.unlock();
  absl::StatusOr<StatusCommit> result = Flush(batch, stop);
  mu_.lock();
  last_flush_end_ = env_.Now();
  if (!result.ok()) KeepPostedOf(batch);
  if (result.ok()) posted_retry_at_.reset();
  // Only Writes collect results; a batch of posted updates alone has nobody waiting.
  if (waiters_.contains(id)) results_.emplace(id, std::move(result));
  EndFlushing();
}

void GitStatusWriter::EndFlushing() {
  flushing_ = false;
  flushed_.notify_all();
  if (posted_) news_.notify_one();
}

void GitStatusWriter::KeepPostedOf(Batch& failed) {
  bool kept = false;
  for (const std::string& path : failed.posted) {
    if (pending_.files.contains(path)) continue;  // a later update of the path
    pending_.files[path] = std::move(failed.files[path]);
    pending_.posted.insert(path);
    kept = true;
  }
  if (!kept) return;
  // News alone keeps its lines for the commit that takes it next.
  if (failed.posted.size() == failed.files.size()) {
    pending_.messages.insert(pending_.messages.begin(), failed.messages.begin(),
                             failed.messages.end());
  }
  posted_ = true;
  posted_retry_at_ =
      env_.Now() + JitteredBackoff(config_.backoff, config_.backoff.max_attempts, env_);
}

void GitStatusWriter::WaitForWindow(std::stop_token stop) {
  const std::chrono::duration<double, std::milli> window = config_.coalesce_window;
  if (window.count() <= 0) return;
  const double burst = std::max(1, config_.coalesce_burst);
  if (!last_flush_end_) {  // the first commit: the credit is whole
    window_credit_ = burst - 1;
    return;
  }
  // Time spent pushing earns nothing: the credit accrues from the end of the last push.
  const double credit = std::min(burst, window_credit_ + (env_.Now() - *last_flush_end_) / window);
  if (credit >= 1) {
    window_credit_ = credit - 1;
    return;
  }
  window_credit_ = 0;
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>((1 - credit) * window);
  mu_.unlock();
  (void)env_.SleepFor(wait, stop);  // a stop only cuts the wait short
  mu_.lock();
}

std::size_t GitStatusWriter::Queued() {
  MutexLock lock(mu_);
  const auto found = waiters_.find(pending_id_);
  return found == waiters_.end() ? 0 : static_cast<std::size_t>(found->second);
}

absl::StatusOr<StatusCommit> GitStatusWriter::Flush(const Batch& batch, std::stop_token stop) {
  std::string last_rejection;
  for (int attempt = 1; attempt <= config_.backoff.max_attempts; ++attempt) {
    if (attempt > 1 && !env_.SleepFor(
                           JitteredBackoff(config_.backoff, attempt - 1, env_), stop)) {
      return absl::CancelledError("cancelled while backing off before a status push");
    }
    absl::StatusOr<Attempt> result = TryOnce(batch, stop);
    if (!result.ok()) return result.status();
    if (result->written.has_value()) return *result->written;
    last_rejection = result->rejection;
  }
  return absl::AbortedError(fmt::format("the status push was rejected {} times; last: {}",
                                        config_.backoff.max_attempts, last_rejection));
}

absl::StatusOr<GitStatusWriter::Attempt> GitStatusWriter::TryOnce(const Batch& batch,
                                                                  std::stop_token stop) {
  std::shared_lock shared(mirror_->lock());
  absl::StatusOr<RepositoryPtr> repo = mirror_->Repository();
  if (!repo.ok()) return repo.status();
  absl::StatusOr<NewObjects*> fresh = NewObjects::Attach(repo->get());
  if (!fresh.ok()) return fresh.status();
  // The tip this writer pushed last is most likely still the remote's: build on it without a
  // fetch. The push is a compare-and-swap on that tip, so a branch someone else moved meanwhile
  // only costs this try; the fetch below follows at once.
  if (std::optional<git_oid> known = KnownTip()) {
    absl::StatusOr<Attempt> pushed = GuardBuildAndPush(repo->get(), **fresh, batch, known, stop);
    if (!pushed.ok()) return pushed.status();
    if (pushed->written && pushed->written->created) return *pushed;
  }
  SetKnownTip(std::nullopt);
  absl::StatusOr<SyncResult> tip = mirror_->SyncBranch(repo->get(), config_.branch, stop);
  if (!tip.ok()) return tip.status();
  return GuardBuildAndPush(repo->get(), **fresh, batch, tip->remote_tip, stop);
}

absl::StatusOr<std::map<std::string, std::string>> GitStatusWriter::Refused(
    git_repository* repo, const Batch& batch, const std::optional<git_oid>& base) {
  std::map<std::string, std::string> refused;
  if (!config_.guard) return refused;
  for (const auto& [path, update] : batch.files) {
    std::optional<std::string> on_tip;
    if (base) {
      absl::StatusOr<std::optional<std::string>> read =
          ReadStatusFileAt(repo, *base, path, config_.read_limits.max_file_bytes);
      if (!read.ok()) return read.status();
      on_tip = *std::move(read);
    }
    if (std::string why = config_.guard(path, on_tip, update); !why.empty()) {
      refused.emplace(path, std::move(why));
    }
  }
  return refused;
}

absl::StatusOr<GitStatusWriter::Attempt> GitStatusWriter::GuardBuildAndPush(
    git_repository* repo, NewObjects& fresh, const Batch& batch, const std::optional<git_oid>& base,
    std::stop_token stop) {
  // A tree over budget is not rebuilt with one more file: that would load its whole listing.
  if (base) {
    if (absl::Status s = CheckStatusTree(repo, *base, config_.read_limits); !s.ok()) return s;
  }
  absl::StatusOr<std::map<std::string, std::string>> refused = Refused(repo, batch, base);
  if (!refused.ok()) return refused.status();
  std::optional<Batch> kept;  // the batch less what was refused, copied only then
  if (!refused->empty()) {
    kept = batch;
    for (const auto& [path, why] : *refused) kept->files.erase(path);
  }
  absl::StatusOr<std::optional<Attempt>> pushed =
      BuildAndPush(repo, fresh, kept ? *kept : batch, base, std::move(stop));
  if (!pushed.ok()) return pushed.status();
  // Nothing to commit: the tip already says exactly this.
  Attempt attempt =
      pushed->value_or(Attempt{StatusCommit{base ? OidHex(*base) : "", false, {}}, {}});
  if (attempt.written) attempt.written->refused = *std::move(refused);
  return attempt;
}

absl::StatusOr<std::optional<GitStatusWriter::Attempt>> GitStatusWriter::BuildAndPush(
    git_repository* repo, NewObjects& fresh, const Batch& batch, const std::optional<git_oid>& base,
    std::stop_token stop) {
  const StatusCommitSpec spec{base,
                              batch.files,
                              config_.author_name,
                              config_.author_email,
                              env_.Now(),
                              CommitMessage(batch.messages, batch.files)};
  absl::StatusOr<std::optional<git_oid>> commit = CreateStatusCommit(repo, spec, &fresh);
  if (!commit.ok()) return commit.status();
  if (!commit->has_value()) return std::nullopt;
  if (absl::Status s = fresh.StoreAsPack(mirror_->path()); !s.ok()) return s;
  if (absl::Status s = mirror_->SetRef(repo, std::string(kStatusOutgoingRef), **commit); !s.ok()) {
    return s;
  }
  const PushRequest push{config_.branch, desired_branch_, refspec_, base, **commit};
  absl::StatusOr<PushOutcome> outcome = mirror_->remote().Push(repo, push, stop);
  if (!outcome.ok()) return outcome.status();
  if (!outcome->accepted) return Attempt{std::nullopt, outcome->rejection};
  SetKnownTip(**commit);
  // Each commit is a pack: past twice the threshold (as after a fetching poll, since a
  // rollout is likely under way) the mirror's thread rolls the small ones up.
  mirror_->RequestCompaction(2 * max_mirror_packs_, Mirror::Pace::kBusy);
  // Best effort: the next fetch refreshes it anyway.
  (void)mirror_->SetRef(repo, Mirror::TrackingRef(config_.branch), **commit);
  return Attempt{StatusCommit{OidHex(**commit), true, {}}, {}};
}

std::optional<git_oid> GitStatusWriter::KnownTip() {
  MutexLock lock(mu_);
  return known_tip_;
}

void GitStatusWriter::SetKnownTip(std::optional<git_oid> tip) {
  MutexLock lock(mu_);
  known_tip_ = tip;
}

absl::StatusOr<StatusFiles> GitStatusWriter::ReadLatest(std::stop_token stop) {
  auto files = ReadLatestIfBranchExists(std::move(stop));
  if (!files.ok()) return files.status();
  return files->value_or(StatusFiles());
}

absl::StatusOr<std::optional<StatusFiles>>
GitStatusWriter::ReadLatestIfBranchExists(std::stop_token stop) {
  std::shared_lock shared(mirror_->lock());
  absl::StatusOr<RepositoryPtr> repo = mirror_->Repository();
  if (!repo.ok()) return repo.status();
  absl::StatusOr<SyncResult> tip =
      mirror_->SyncBranch(repo->get(), config_.branch, std::move(stop));
  if (!tip.ok()) return tip.status();
  if (!tip->remote_tip.has_value()) return std::nullopt;
  return ReadStatusFiles(repo->get(), *tip->remote_tip, config_.read_limits);
}

}  // namespace tr::gitsource
