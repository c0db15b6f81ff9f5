// The desired state as the controller sees it: where the watched branch of the profile
// repository points (`Poll`) and the profiles at a commit (`Snapshot`).
//
// `LibGitSource` keeps a persistent bare mirror in the state directory. A poll asks the
// remote for its refs and fetches only when the watched branch moved, so an idle poll
// moves one ref advertisement and no pack. Every network operation has the configured
// deadline and honours the caller's stop token; fetches are capped in bytes. Snapshots are
// read from the object database (no work tree) and, when configured, only for commits with
// a valid SSH signature by an allowed signer.
//
// Errors (the code says what to do next):
//   Unavailable       network or server trouble                  -> retry with backoff
//   DeadlineExceeded  the operation's deadline passed            -> retry with backoff
//   Cancelled         the caller's stop token was triggered
//   Unauthenticated   credentials missing, unreadable or refused -> fix the secret
//   PermissionDenied  ssh host key unknown or changed            -> fix known_hosts
//   ResourceExhausted the fetch exceeded its byte cap
//   NotFound          the branch or commit does not exist
//   FailedPrecondition a commit that must not be acted on (signature) or past a snapshot
//                     limit (file count, total bytes; the message names it)
//   InvalidArgument   bad configuration
// Credentials never appear in any message.
//
// Thread-safe: any number of threads may call Poll and Snapshot. Concurrent polls coalesce:
// a poll that arrives while another runs waits for the next round, which one of the waiting
// callers runs for all of them, so every caller sees the remote as of after its call.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "base/mutex.h"
#include "gitsource/config.h"
#include "gitsource/snapshot.h"

namespace tr::gitsource {

class Mirror;

struct RemoteHead {
  std::string commit;                // full hex id of the watched branch's tip
  bool fetched = false;              // this poll downloaded objects
  std::uint64_t received_bytes = 0;  // by this poll
};

class GitSource {
 public:
  virtual ~GitSource() = default;

  // Where the watched branch points now, fetched into the mirror if it moved.
  virtual absl::StatusOr<RemoteHead> Poll(std::stop_token stop = {}) = 0;

  // The profiles at `commit` (a full hex id, normally from Poll), with its origin.
  // NotFound when the mirror does not have it; FailedPrecondition when signature
  // verification is configured and refuses the commit, or past a snapshot limit.
  virtual absl::StatusOr<ProfileSnapshot> Snapshot(std::string_view commit) = 0;
};

// A pull request's proposed profiles, read for a plan preview and never acted on.
class PreviewSource {
 public:
  virtual ~PreviewSource() = default;
  // The profiles at the commit that `remote_ref` ("refs/pull/7/head",
  // "refs/merge-requests/7/head") names on the configured remote, fetched into the mirror and
  // kept there under refs/previews/. Signatures are not checked: a preview is only read.
  // Read with the preview limits (GitSourceConfig::preview_limits), stricter than the
  // watched branch's; a head past one is not kept. InvalidArgument for any other kind of
  // ref; NotFound when the remote has no such ref; FailedPrecondition naming the limit past
  // one; the network errors of Poll.
  virtual absl::StatusOr<ProfileSnapshot> FetchPreview(const std::string& remote_ref,
                                                       std::stop_token stop) = 0;
  // Deletes the refs/previews/ ref that FetchPreview kept for `remote_ref` (the pull request
  // closed or merged), so compaction lets its objects go. OK when there is none;
  // InvalidArgument for a ref FetchPreview refuses. (FetchPreview also keeps at most
  // GitSourceConfig::max_kept_previews, dropping the lowest-numbered.)
  virtual absl::Status DropPreview(const std::string& remote_ref) = 0;
};

class LibGitSource final : public GitSource, public PreviewSource {
 public:
  // Opens (or creates) the mirror in `config.state_dir`. No network traffic happens here.
  // InvalidArgument for unusable configuration. `env` times the network operations (the real
  // one: the IO is real); it must outlive the source.
  static absl::StatusOr<std::unique_ptr<LibGitSource>> Open(GitSourceConfig config, Env& env);

  absl::StatusOr<RemoteHead> Poll(std::stop_token stop = {}) override;
  absl::StatusOr<ProfileSnapshot> Snapshot(std::string_view commit) override;
  absl::StatusOr<ProfileSnapshot> FetchPreview(const std::string& remote_ref,
                                               std::stop_token stop) override;
  absl::Status DropPreview(const std::string& remote_ref) override;

  // For the status writer, which shares the mirror and must never write `branch()`.
  std::shared_ptr<Mirror> mirror() const { return mirror_; }
  const std::string& branch() const { return config_.branch; }
  // Packs past which the mirror is compacted (GitSourceConfig::max_mirror_packs).
  std::size_t max_mirror_packs() const { return config_.max_mirror_packs; }
  // What opening the mirror repaired after a previous process died (see Mirror::Open).
  const std::vector<std::string>& mirror_repairs() const;

 private:
  LibGitSource(GitSourceConfig config, std::shared_ptr<Mirror> mirror)
      : config_(std::move(config)), mirror_(std::move(mirror)) {}
  absl::StatusOr<RemoteHead> PollOnce(std::stop_token stop);

  const GitSourceConfig config_;
  const std::shared_ptr<Mirror> mirror_;

  Mutex poll_mu_;
  std::condition_variable_any poll_done_;
  bool polling_ ABSL_GUARDED_BY(poll_mu_) = false;
  std::uint64_t rounds_started_ ABSL_GUARDED_BY(poll_mu_) = 0;
  std::uint64_t rounds_finished_ ABSL_GUARDED_BY(poll_mu_) = 0;
  std::optional<absl::StatusOr<RemoteHead>> last_poll_ ABSL_GUARDED_BY(poll_mu_);
};

}  // namespace tr::gitsource
