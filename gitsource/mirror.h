// Internal to gitsource: the persistent bare repository in the state directory that the Git
// source and the status writer share, with the remote it mirrors.
//
// Only two branches are mirrored, each into its own tracking ref: the desired-state branch
// and the status branch. Each operation opens its own repository handle, so any number of
// snapshot reads run while a fetch writes a new pack. Since libgit2 cannot gc, packs
// accumulate with every fetch; once there are too many, `CompactIfNeeded` rewrites what
// the refs reach into one pack (while no other operation holds the mirror).
//
// Thread-safe.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gitsource/config.h"
#include "gitsource/libgit2_util.h"
#include "gitsource/mirror_repair.h"
#include "gitsource/remote_client.h"

namespace tr::gitsource {

class Mirror {
 public:
  // Opens <state_dir>/mirror.git, creating it when missing. The mirror belongs to this
  // process while the Mirror lives (an flock on <state_dir>/mirror.owner): what a killed
  // process of its own left behind is repaired first (see mirror_repair.h), and a directory
  // that is not a usable repository even then is removed and created afresh (the mirror is
  // only a cache; the next fetch fills it). `repaired()` lists what repair removed.
  // InvalidArgument for an unusable remote configuration or state directory;
  // FailedPrecondition when another process owns the state directory.
  static absl::StatusOr<std::shared_ptr<Mirror>> Open(const std::filesystem::path& state_dir,
                                                      RemoteConfig remote);

  // A new handle on the repository, for the calling operation only.
  absl::StatusOr<RepositoryPtr> Repository() const;

  const RemoteClient& remote() const { return remote_; }

  // Brings the remote's `branch` into the mirror (RemoteClient::Sync) and points its
  // tracking ref at it.
  absl::StatusOr<SyncResult> SyncBranch(git_repository* repo, const std::string& branch,
                                        std::stop_token stop) const;

  // Points `ref` at `id` (creating or moving it). Ref updates of all operations are
  // serialised here, so concurrent ones never trip over each other's lock files.
  absl::Status SetRef(git_repository* repo, const std::string& ref, const git_oid& id) const;
  // Deletes `ref`; OK when it does not exist. Serialised with SetRef.
  absl::Status DeleteRef(git_repository* repo, const std::string& ref) const;
  const std::filesystem::path& path() const { return path_; }

  // Held shared by every operation on the repository, exclusively by compaction.
  std::shared_mutex& lock() const { return lock_; }

  // Packs everything the refs reach into one pack and deletes the others, when there are
  // more than `max_packs`. Takes the lock exclusively; call it without holding it.
  absl::Status CompactIfNeeded(std::size_t max_packs = 24) const;

  // The tracking ref of a remote branch: refs/remotes/origin/<branch>.
  static std::string TrackingRef(const std::string& branch);

  // What Open removed from the mirror (paths inside it), or "mirror.git" when it re-created it.
  const std::vector<std::string>& repaired() const { return repaired_; }

 private:
  Mirror(std::filesystem::path path, RemoteClient remote, MirrorOwnerLock owner,
         std::vector<std::string> repaired)
      : path_(std::move(path)),
        remote_(std::move(remote)),
        owner_(std::move(owner)),
        repaired_(std::move(repaired)) {}

  std::filesystem::path path_;
  RemoteClient remote_;
  MirrorOwnerLock owner_;
  std::vector<std::string> repaired_;
  mutable std::shared_mutex lock_;
  mutable std::mutex ref_mu_;
};

}  // namespace tr::gitsource
