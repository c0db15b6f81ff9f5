// Internal to gitsource: the network side of the mirror. Each call is one bounded
// NetworkOperation (deadline from the config, cancellation from the caller's stop token)
// on an anonymous libgit2 remote, with our transports (deadline-aware sockets; the OpenSSH
// client for ssh), credentials read from files at use, and the fetched-bytes cap.
//
// Thread-safe: calls share nothing but the immutable configuration; each takes the
// repository handle it works on, which the caller must not use concurrently.
#pragma once

#include <git2.h>

#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "gitsource/config.h"
#include "gitsource/remote_url.h"

namespace tr::gitsource {

struct [[nodiscard]] SyncResult {
  std::optional<git_oid> remote_tip;  // nullopt: the remote has no such ref
  bool fetched = false;               // a pack was downloaded
  std::uint64_t received_bytes = 0;
};

struct PushRequest {
  std::string status_branch;               // the only branch the push may update
  std::string desired_branch;              // never written; named so the check can refuse it
  std::string refspec;                     // from StatusPushRefspec; checked again here
  std::optional<git_oid> expected_remote;  // what we built on; nullopt: the branch is new
  git_oid new_commit{};                    // held by kStatusOutgoingRef
  // A proposal branch instead (`status_branch` then names it): the refspec must pass
  // CheckProposalPushRefspec against `proposal_status_branch`, and the push may replace the
  // remote's tip (not only fast-forward it) as long as that tip is `expected_remote`.
  bool force_with_lease = false;
  std::string proposal_status_branch{};
};

struct PushOutcome {
  bool accepted = false;
  std::string rejection;  // why not, e.g. "fetch first" or "the remote moved"
};

class RemoteClient {
 public:
  // Checks the URL and the auth settings. InvalidArgument when they are unusable. `env` times
  // the operations (the real one: the IO is real); it must outlive the client.
  static absl::StatusOr<RemoteClient> Create(RemoteConfig config, Env& env);

  // Connects, lists the remote's refs and, when `remote_ref` points to a commit the
  // repository does not have, downloads it over the same connection (so a no-op costs one
  // ref advertisement and no pack). Moves no ref: the caller records the tip. The download is
  // cut past the config's max_fetch_bytes, or past `max_fetch_bytes` when that is smaller and
  // not 0 (ResourceExhausted either way).
  absl::StatusOr<SyncResult> Sync(git_repository* repo, const std::string& remote_ref,
                                  std::stop_token stop, std::uint64_t max_fetch_bytes = 0) const;

  // Pushes `request.new_commit` to the status branch. Never forced: FailedPrecondition
  // unless the refspec passes CheckStatusPushRefspec, and refused before anything is sent
  // unless the remote still holds `expected_remote` and the new commit descends from it.
  // A rejection by the server or a moved remote is an outcome (retry on a fresh tip), not
  // an error; errors are the network's.
  absl::StatusOr<PushOutcome> Push(git_repository* repo, const PushRequest& request,
                                   std::stop_token stop) const;

  const RemoteConfig& config() const { return config_; }
  std::string display_url() const { return UrlForDisplay(config_.url); }

 private:
  RemoteClient(RemoteConfig config, RemoteUrl url, Env& env)
      : config_(std::move(config)), url_(std::move(url)), env_(&env) {}

  RemoteConfig config_;
  RemoteUrl url_;
  Env* env_;
};

}  // namespace tr::gitsource
