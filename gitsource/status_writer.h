// Status write-back: files under `status/` (e.g. status/<cluster>.yaml, opaque text made
// by core) committed on the status branch of the profile repository, and read back after a
// restart.
//
// `GitStatusWriter` builds each commit on the remote's current tip of the status branch
// (a root commit when the branch does not exist yet), authored by the configured identity
// at the injected clock's time, and pushes it fast-forward only. When the push is rejected
// (someone else moved the branch) it fetches the new tip, re-applies the same files on it
// and retries after a jittered backoff from the injected sleeper and random source, up to
// the policy's attempts. After a push of its own it builds the next commit on the commit it
// pushed, without a fetch; a rejection of that (someone else pushed) is followed at once by
// the fetch and the usual attempt. It never forces and never pushes any ref but the status branch:
// the one refspec it uses comes from StatusPushRefspec and is checked again before every
// push, together with the fast-forward and expected-tip checks at the wire.
//
// Posting: a Post joins the pending batch like a Write but returns at once; the batch goes out
// with the next commit — the one a Write makes, or, when no Write comes, one the writer's own
// thread makes (started by the first Post, stopped and joined by the destructor) once the news
// has waited a `coalesce_window` for a Write to take it along (a quick step's news then shares
// the next step's push instead of delaying it). A later update of its path replaces a posted
// update; one whose push failed waits in the batch for the next commit (a Write's, or the one a
// later Post makes: it is not retried on its own, so a Git server that is down is not asked
// again every window); a process that ends first loses it. Ordering is kept: a Write after a
// Post of the same path wins.
//
// Coalescing: one Write carries any number of files; concurrent Writes (one per cluster
// worker) join the batch waiting behind the commit in progress and go out together as the
// next commit, whose result each of their callers gets. A later update of a path replaces
// an earlier one in the same batch. A Write whose caller is cancelled while waiting may
// still be committed with its batch. With a `coalesce_window`, commits are one per window on
// average: an update that arrives when the writer has no credit left waits (on the injected
// sleeper) until a window's worth has accrued, collecting every update that arrives meanwhile
// into one commit. Credit accrues one commit per window between pushes, up to
// `coalesce_burst`: after a quiet spell that many commits go out one after the other without a
// wait (a step's record, then the next step's write-ahead record), and under steady load the
// commits are a window apart. No update waits longer than the window plus one push. Write
// still returns only once its commit is pushed.
//
// Guarding: with a `guard`, every file of a batch is shown to it with what the tip the commit is
// built on holds at its path, each time a commit is built (so again after every fetch). A file
// it refuses is left out of that commit, and the refusal is reported to the Writes of the batch
// (StatusCommit::refused); the rest of the batch goes out. As the push is a compare-and-swap on
// that tip, what the guard saw is what the file is replaced on: with leader election, a replica
// that lost its shard cannot land a record over its successor's
// (reconciler/features/lease/fencing.h).
//
// Errors: Unavailable/DeadlineExceeded (network; retry), Aborted (rejected on every
// attempt; retry the reconcile), Cancelled, InvalidArgument (a path outside status/, bad
// configuration), plus the codes of GitSource for credentials and host keys.
//
// Thread-safe.
#pragma once

#include <git2.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "base/mutex.h"

namespace tr::gitsource {

class Mirror;
class NewObjects;
class LibGitSource;

struct StatusUpdate {
  // Path under status/ -> new content; nullopt removes the file.
  std::map<std::string, std::optional<std::string>> files;
  std::string message;  // one line saying what changed, e.g. "prod-eu-1: UpgradingTalos 2/5"
};

// What reading the status branch may cost: the branch is written by the reconciler only, but
// anyone who can push to it could make it hostile. Only `status/<name>` files directly under
// status/ are read (no sub-directory is descended); sizes come from object headers before
// anything is read.
//
// A status/ tree with more entries than `max_files`, or a listing larger than
// StatusListingBudget, is refused as a whole (ResourceExhausted, IsStatusTreeOverBudget): its
// listing alone could take the process's memory, and reading part of it would make the
// clusters past the cut start without memory. Callers keep what they knew before.
struct StatusReadLimits {
  std::size_t max_file_bytes = 1 << 20;  // larger files are skipped
  std::size_t max_files = 5000;          // a tree with more entries is refused
  std::uint64_t max_total_bytes = std::uint64_t{64} << 20;  // files past this are skipped
};

// What one entry of status/'s listing may take: a mode, a file name of a cluster name (at most
// 63 bytes) and ".yaml", a NUL and an object id come to 96 bytes.
inline constexpr std::uint64_t kStatusListingBytesPerFile = 128;
// The read limits for a fleet whose watched branch may hold `profile_files` profiles: one
// status file per cluster, so status/ may list as many (and never fewer than the default).
inline StatusReadLimits StatusReadLimitsFor(std::size_t profile_files) {
  StatusReadLimits limits;
  if (profile_files > limits.max_files) limits.max_files = profile_files;
  return limits;
}
std::uint64_t StatusListingBudget(const StatusReadLimits& limits);
bool IsStatusTreeOverBudget(const absl::Status& status);

// A status file that was not read, and why: "too_large", "over_budget",
// "duplicate" (the same blob as a file read before) here;
// the status store adds its own reasons (see reconciler/loop/status_store.h).
struct SkippedStatusFile {
  std::string path;
  std::string reason;
  std::string detail;  // for a log line: the limit and its value
};

struct StatusFiles {
  std::map<std::string, std::string> files;  // path -> content
  std::vector<SkippedStatusFile> skipped;
};

struct StatusCommit {
  std::string commit;    // the status branch's tip that holds the update (full hex id)
  bool created = false;  // false when the tip already held exactly this content
  // Files of the batch the guard refused on that tip (left out of it), by path: why.
  std::map<std::string, std::string> refused;
};

// Whether `update` (nullopt: a removal) may replace what the tip holds at `path` (`on_tip`;
// nullopt: no file, or one too large to read): "" when it may, else why not.
using StatusFileGuard = std::function<std::string(const std::string& path,
                                                  const std::optional<std::string>& on_tip,
                                                  const std::optional<std::string>& update)>;

class StatusWriter {
 public:
  virtual ~StatusWriter() = default;
  // Commits and pushes `update` (coalesced with concurrent ones). ResourceExhausted
  // (IsStatusTreeOverBudget) when the tip's status/ tree is over the read limits: nothing is
  // written onto it.
  virtual absl::StatusOr<StatusCommit> Write(StatusUpdate update, std::stop_token stop = {}) = 0;
  // Queues `update` for the next commit and returns without waiting for it: for news whose loss
  // (a crash, a failed push) costs nothing but a moment of staleness, since nothing resumes from
  // it. InvalidArgument for a path outside status/. By default, a Write whose result is dropped.
  virtual absl::Status Post(StatusUpdate update) { return Write(std::move(update)).status(); }
  // Every file directly under status/ at the remote's tip of the status branch, by path,
  // within the read limits (what is past them is listed as skipped); empty when the branch
  // does not exist yet.
  virtual absl::StatusOr<StatusFiles> ReadLatest(std::stop_token stop = {}) = 0;
};

struct StatusWriterConfig {
  std::string branch = "talos-reconciler/status";
  std::string author_name = "talos-reconciler";
  std::string author_email = "talos-reconciler@localhost";
  BackoffPolicy backoff;
  StatusReadLimits read_limits;  // what ReadLatest reads at most
  std::chrono::milliseconds coalesce_window{0};  // one commit per window on average; 0: none
  int coalesce_burst = 1;  // commits that may follow one another without a wait; at least 1
  StatusFileGuard guard;  // empty: every file is written
};

class GitStatusWriter final : public StatusWriter {
 public:
  // Shares the source's mirror and remote; the source's branch is the one never written.
  // InvalidArgument when the status branch is invalid or overlaps the desired branch. `env`
  // (commit times, backoff, the coalescing window) must outlive the writer.
  static absl::StatusOr<std::unique_ptr<GitStatusWriter>> Create(const LibGitSource& source,
                                                                 StatusWriterConfig config,
                                                                 Env& env);

  absl::StatusOr<StatusCommit> Write(StatusUpdate update, std::stop_token stop = {}) override;
  absl::Status Post(StatusUpdate update) override;
  // The name of the thread that commits posted updates (started by the first Post).
  static constexpr char kPosterThreadName[] = "status-post";
  absl::StatusOr<StatusFiles> ReadLatest(std::stop_token stop = {}) override;
  // As ReadLatest, but nullopt when the branch does not exist (rather than no files).
  absl::StatusOr<std::optional<StatusFiles>> ReadLatestIfBranchExists(
      std::stop_token stop = {});

  // How many Writes are waiting for a commit that has not started yet.
  std::size_t Queued();

 private:
  struct Batch {
    std::map<std::string, std::optional<std::string>> files;
    std::vector<std::string> messages;
    std::set<std::string> posted;  // the paths whose update is a Post's
  };

  // One fetch-build-push round: the commit, or the reason the push was rejected.
  struct Attempt {
    std::optional<StatusCommit> written;
    std::string rejection;
  };

  GitStatusWriter(std::shared_ptr<Mirror> mirror, std::size_t max_mirror_packs,
                  std::string desired_branch, StatusWriterConfig config, std::string refspec,
                  Env& env);
  absl::StatusOr<StatusCommit> Flush(const Batch& batch, std::stop_token stop);
  absl::StatusOr<Attempt> TryOnce(const Batch& batch, std::stop_token stop);
  // The files of `batch` the guard refuses on `base`, and why (none without a guard).
  absl::StatusOr<std::map<std::string, std::string>> Refused(git_repository* repo,
                                                             const Batch& batch,
                                                             const std::optional<git_oid>& base);
  // Guards `batch` on `base`, then builds and pushes what is left (as BuildAndPush); a batch
  // `base` already holds is written = {base, created = false}. The refusals go with it.
  absl::StatusOr<Attempt> GuardBuildAndPush(git_repository* repo, NewObjects& fresh,
                                            const Batch& batch,
                                            const std::optional<git_oid>& base,
                                            std::stop_token stop);
  // Builds the batch on `base` and pushes it (expecting the remote at `base`); nullopt when
  // `base` already holds exactly this content.
  // The commit's objects, kept in memory by `fresh` as they are written, are stored as one pack
  // before the push.
  absl::StatusOr<std::optional<Attempt>> BuildAndPush(git_repository* repo, NewObjects& fresh,
                                                      const Batch& batch,
                                                      const std::optional<git_oid>& base,
                                                      std::stop_token stop);
  std::optional<git_oid> KnownTip();
  void SetKnownTip(std::optional<git_oid> tip);
  // As the one committing: takes the pending batch, commits and pushes it (mu_ released
  // meanwhile) and hands the result to the Writes that wait for it.
  void CommitPending(std::stop_token stop) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The posting thread: commits a batch of posted updates when no Write is about to.
  void CommitPosted(std::stop_token stop);
  // Puts back the posted updates of a batch whose push failed that no later update replaced,
  // and has the posting thread try them again after the longest backoff step: nobody else
  // may commit for a long time, and at once would only fail again against a remote that is
  // down.
  void KeepPostedOf(Batch& failed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // No commit runs any more: wakes the Writes and, with posted updates pending, the posting
  // thread.
  void EndFlushing() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits out the rest of the coalescing window after the last commit (mu_ released).
  // Releases mu_ while it waits; holds it again on return.
  void WaitForWindow(std::stop_token stop) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<Mirror> mirror_;
  const std::size_t max_mirror_packs_;
  const std::string desired_branch_;
  const StatusWriterConfig config_;
  const std::string refspec_;
  Env& env_;

  Mutex mu_;
  std::condition_variable_any flushed_;  // the Writes wait on it
  // The posting thread waits on it alone: a Post (several in each node upgrade) wakes no Write.
  std::condition_variable_any news_;
  bool flushing_ ABSL_GUARDED_BY(mu_) = false;
  Batch pending_ ABSL_GUARDED_BY(mu_);
  bool posted_ ABSL_GUARDED_BY(mu_) = false;  // the pending batch holds posted updates
  // Set while posted updates put back after a failed push wait for their next try.
  std::optional<std::chrono::system_clock::time_point> posted_retry_at_ ABSL_GUARDED_BY(mu_);
  std::uint64_t pending_id_ ABSL_GUARDED_BY(mu_) = 0;  // the id the pending batch will get
  // Callers waiting for each batch's result, and the results they wait for.
  std::map<std::uint64_t, int> waiters_ ABSL_GUARDED_BY(mu_);
  std::map<std::uint64_t, absl::StatusOr<StatusCommit>> results_ ABSL_GUARDED_BY(mu_);
  std::optional<std::chrono::system_clock::time_point> last_flush_end_ ABSL_GUARDED_BY(mu_);
  // The commits the window allowed without a wait, as of last_flush_end_ (accrues after it).
  double window_credit_ ABSL_GUARDED_BY(mu_) = 0;
  // The commit this writer pushed last (the remote's tip unless someone else pushed since).
  std::optional<git_oid> known_tip_ ABSL_GUARDED_BY(mu_);
  // Last, so that it is stopped and joined before anything it uses goes.
  std::jthread poster_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::gitsource
