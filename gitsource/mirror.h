// Internal to gitsource: the persistent bare repository in the state directory that the Git
// source and the status writer share, with the remote it mirrors.
//
// Only two branches are mirrored, each into its own tracking ref: the desired-state branch
// and the status branch. Each operation opens its own repository handle, so any number of
// snapshot reads run while a fetch writes a new pack. Since libgit2 cannot gc, packs
// accumulate with every fetch and every status commit (object_pack.h), and loose objects with
// other writes; once there are too many, `CompactIfNeeded` rolls the small packs and the loose
// objects up into one pack (pack_rollup.h), copying the packs as they are, on the mirror's own
// thread when asked with `RequestCompaction`. It writes while every other operation goes on,
// and holds the mirror alone only to delete.
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "base/mutex.h"
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
  // FailedPrecondition when another process owns the state directory. `env` as
  // RemoteClient::Create's.
  static absl::StatusOr<std::shared_ptr<Mirror>> Open(const std::filesystem::path& state_dir,
                                                      RemoteConfig remote, Env& env);

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

  // Held shared by every operation on the repository, exclusively by compaction's deletes.
  std::shared_mutex& lock() const { return lock_; }

  // The name of the compaction's thread.
  static constexpr char kCompactorThreadName[] = "mirror-compact";

  // Loose objects past which the mirror is compacted, however few its packs.
  static constexpr std::size_t kMaxLooseObjects = 4096;

  // A whole rewrite once the mirror holds this many times the objects of its largest pack.
  static constexpr std::size_t kWholeRewriteGrowth = 4;
  // The same while the mirror is busy: a whole rewrite searches deltas across every object it
  // reaches (in a 300-cluster rollout about 0.6 CPU s, 3–4% of the daemon's), so it waits for
  // the rollout's end unless the mirror grows this much first.
  static constexpr std::size_t kBusyWholeRewriteGrowth = 16;

  // Who asks for a compaction: a status commit or a poll that fetched a commit (a rollout is
  // likely under way), or a poll that fetched nothing.
  enum class Pace { kQuiet, kBusy };
  // The growth a requested compaction rewrites the whole mirror at: kBusyWholeRewriteGrowth
  // from a busy request until a quiet request follows a quiet one, kWholeRewriteGrowth then.
  class WholeRewritePace {
   public:
    std::size_t GrowthFor(Pace pace);

   private:
    bool busy_since_quiet_ = false;
  };

  // When there are more than `max_packs` packs or kMaxLooseObjects loose objects: writes the
  // packs outside the geometric progression and the loose objects into one pack, then deletes
  // them (pack_rollup.h). When that would roll every pack up, it keeps the largest instead,
  // until the mirror holds `whole_growth` times its objects (WholeRewriteDue); then it writes
  // what the refs reach, so that what nothing reaches goes (reachable_pack.h). Takes the lock
  // shared, then exclusively to delete; call it without holding it. Compactions run one at a
  // time.
  absl::Status CompactIfNeeded(std::size_t max_packs = 24,
                               std::size_t whole_growth = kWholeRewriteGrowth) const;
  // CompactIfNeeded(max_packs, growth) on the mirror's own thread (started by the first
  // request, stopped and joined with the mirror), so that nobody waits for it; requests that
  // come while one runs make one compaction more, with the smallest `max_packs` and growth
  // asked. The growth is kWholeRewriteGrowth when the mirror is quiet (`pace` and the request
  // before), kBusyWholeRewriteGrowth otherwise.
  void RequestCompaction(std::size_t max_packs, Pace pace) const;
  // How many requested compactions have run to their end (for tests).
  std::uint64_t CompactionsDone() const;

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
  void CompactOnRequest(std::stop_token stop) const;

  mutable std::shared_mutex lock_;
  mutable std::mutex ref_mu_;
  mutable std::mutex compact_mu_;  // one compaction at a time
  mutable Mutex request_mu_;
  mutable std::condition_variable_any requested_cv_;
  mutable std::optional<std::size_t> requested_ ABSL_GUARDED_BY(request_mu_);
  mutable std::size_t requested_growth_ ABSL_GUARDED_BY(request_mu_) = kBusyWholeRewriteGrowth;
  mutable WholeRewritePace pace_ ABSL_GUARDED_BY(request_mu_);
  mutable std::uint64_t compactions_ ABSL_GUARDED_BY(request_mu_) = 0;
  // Last, so that it is stopped and joined before anything it uses goes.
  mutable std::jthread compactor_ ABSL_GUARDED_BY(request_mu_);
};

}  // namespace tr::gitsource
