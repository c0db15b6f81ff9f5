// Configuration of the Git side of the reconciler: which remote, how to authenticate, how
// long and how much a network operation may take, where the local mirror lives, and the
// process-wide libgit2 settings (memory caps for a small sidecar, trust store).
//
// Secrets are never part of these values: they name files, read at each use so that
// rotated secrets (e.g. a re-mounted Kubernetes Secret) apply without a restart.
//
// Values only; thread-compatible. `ConfigureLibgit2` is thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "gitsource/snapshot.h"

namespace tr::gitsource {

struct RemoteAuth {
  // HTTPS: a file holding an access token, sent as the password of HTTP basic auth with
  // `username` (default "git"; GitHub, GitLab, Gitea and Bitbucket accept any name).
  std::filesystem::path token_file;
  // HTTPS: a file holding the password for `username` (basic auth). Exclusive with
  // `token_file`.
  std::filesystem::path password_file;
  // HTTPS basic-auth user; for SSH, the login when the URL names none (default "git").
  std::string username;
  // SSH: an unencrypted private key file (OpenSSH format).
  std::filesystem::path ssh_key_file;
  // SSH: an OpenSSH known_hosts file. Required for ssh URLs: a host that is not listed, or
  // whose key differs, is refused. Nothing is ever added to it.
  std::filesystem::path known_hosts_file;
  // The OpenSSH client to run for ssh URLs.
  std::string ssh_command = "ssh";
  // Allow sending credentials over plain http:// (never needed outside tests).
  bool allow_insecure_http = false;
};

struct NetworkLimits {
  // Every network operation (one poll, one fetch, one push attempt) ends by then.
  std::chrono::milliseconds operation_timeout{60'000};
  // A fetch that receives more than this is aborted (ResourceExhausted).
  std::uint64_t max_fetch_bytes = std::uint64_t{256} << 20;
};

struct RemoteConfig {
  // https://host/path, http://host/path, ssh://[user@]host[:port]/path, [user@]host:path,
  // git://host[:port]/path, file:///path or an absolute path.
  std::string url;
  RemoteAuth auth;
  NetworkLimits limits;
};

// Optional commit signature verification. When set, a snapshot is only returned for a
// commit carrying a valid SSH signature (gpg.format=ssh) by a key in the allowed-signers
// file, as `git verify-commit` with gpg.ssh.allowedSignersFile decides.
struct SignatureVerification {
  std::filesystem::path allowed_signers_file;
};

struct GitSourceConfig {
  RemoteConfig remote;
  std::string branch = "main";      // the desired-state branch; never written
  std::filesystem::path state_dir;  // the mirror lives in <state_dir>/mirror.git
  SnapshotLimits snapshot_limits;                                // the watched branch's
  SnapshotLimits preview_limits = PreviewSnapshotLimits();      // pull requests' heads
  std::optional<SignatureVerification> verify_signatures;
  // libgit2 cannot gc: each fetch adds a pack. Past this many, the mirror is compacted
  // (Mirror::CompactIfNeeded) after a poll that fetched nothing (after one that fetched, only
  // past twice as many).
  std::size_t max_mirror_packs = 24;
  // Pull request heads kept under refs/previews/ at most. A pull request whose close the
  // daemon never heard of (a webhook lost, the daemon down) would keep its head's objects for
  // ever; past this many, the lowest-numbered (the oldest) go, and an open one among them is
  // fetched again by its next event.
  std::size_t max_kept_previews = 256;
};

// Process-wide libgit2 settings, sized for a small sidecar. libgit2 keeps them globally.
struct Libgit2Settings {
  std::size_t object_cache_bytes = std::size_t{16} << 20;     // decompressed object cache
  std::size_t mwindow_size = std::size_t{32} << 20;           // one mapped pack window
  std::size_t mwindow_mapped_limit = std::size_t{128} << 20;  // all mapped windows
  std::size_t mwindow_file_limit = 64;                        // pack files kept open
  std::size_t pack_max_object_bytes = std::size_t{64} << 20;  // largest object in a fetch
  // Replaces the system trust store for HTTPS remotes (PEM bundle). Empty: system default.
  std::filesystem::path https_ca_file;
};

// Initialises libgit2 once and applies `settings` (later calls re-apply them). Returns
// InvalidArgument when libgit2 refuses a value, e.g. an unreadable CA file.
absl::Status ConfigureLibgit2(const Libgit2Settings& settings = {});

}  // namespace tr::gitsource
