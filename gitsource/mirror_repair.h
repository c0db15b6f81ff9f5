// Internal to gitsource: what a process killed in the middle of a Git operation can leave in
// the mirror, and its removal. The mirror is a cache of the remote, so repair may drop anything
// it cannot vouch for (the next fetch brings it back): stale lock files (`*.lock`, e.g.
// refs/remotes/origin/<branch>.lock, packed-refs.lock), temporary and half-written packs (a
// .pack without its .idx), temporary loose objects, and refs that are unreadable or name an
// object the mirror does not have.
//
// Only safe while no other process uses the mirror: the caller holds the state directory's
// owner lock (see MirrorOwnerLock).
//
// Thread-compatible.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::gitsource {

// An exclusive advisory lock (flock) on <state_dir>/mirror.owner, held until destruction, so
// two processes never share one mirror. FailedPrecondition when another process holds it.
class MirrorOwnerLock {
 public:
  static absl::StatusOr<MirrorOwnerLock> Acquire(const std::filesystem::path& state_dir);
  MirrorOwnerLock(MirrorOwnerLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  MirrorOwnerLock& operator=(MirrorOwnerLock&&) = delete;
  ~MirrorOwnerLock();

 private:
  explicit MirrorOwnerLock(int fd) : fd_(fd) {}
  int fd_;
};

// Removes what a dead process left in the bare repository at `path`; returns what was removed
// (paths relative to `path`, for the log). Internal when the repository cannot be opened
// afterwards or its refs cannot be listed: the caller re-creates the mirror.
absl::StatusOr<std::vector<std::string>> RepairMirror(const std::filesystem::path& path);

}  // namespace tr::gitsource
