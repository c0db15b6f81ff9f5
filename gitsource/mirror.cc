#include "gitsource/mirror.h"

#include <malloc.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <vector>

#include "base/thread_name.h"
#include "fmt/format.h"
#include "gitsource/object_pack.h"
#include "gitsource/pack_rollup.h"
#include "gitsource/reachable_pack.h"

namespace tr::gitsource {
namespace fs = std::filesystem;
namespace {

absl::Status CreateBare(const fs::path& path) {
  git_repository* raw = nullptr;
  if (int rc = git_repository_init(&raw, path.c_str(), /*is_bare=*/1); rc < 0) {
    return GitError(rc, fmt::format("create the mirror {}", path.string()));
  }
  git_repository_free(raw);
  return absl::OkStatus();
}

// Whether `pack` holds one of the sorted `ids` (true when its index cannot be read).
bool PackHoldsAny(const PackFile& pack, const std::vector<git_oid>& ids) {
  if (ids.empty()) return false;
  absl::StatusOr<std::vector<git_oid>> listed =
      PackIndexIds(fs::path(pack.pack).replace_extension(".idx"));
  if (!listed.ok()) return true;
  return std::any_of(ids.begin(), ids.end(), [&](const git_oid& id) { return Holds(*listed, id); });
}

}  // namespace

std::string Mirror::TrackingRef(const std::string& branch) {
  return fmt::format("refs/remotes/origin/{}", branch);
}

absl::StatusOr<std::shared_ptr<Mirror>> Mirror::Open(const fs::path& state_dir, RemoteConfig remote,
                                                     Env& env) {
  if (state_dir.empty()) return absl::InvalidArgumentError("no state directory is configured");
  absl::StatusOr<RemoteClient> client = RemoteClient::Create(std::move(remote), env);
  if (!client.ok()) return client.status();
  std::error_code ec;
  fs::create_directories(state_dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        fmt::format("cannot create the state directory {}: {}", state_dir.string(), ec.message()));
  }
  absl::StatusOr<MirrorOwnerLock> owner = MirrorOwnerLock::Acquire(state_dir);
  if (!owner.ok()) return owner.status();
  const fs::path path = state_dir / "mirror.git";
  std::vector<std::string> repaired;
  git_repository* raw = nullptr;
  bool usable = git_repository_open_bare(&raw, path.c_str()) == 0;
  git_repository_free(raw);
  if (usable) {
    absl::StatusOr<std::vector<std::string>> removed = RepairMirror(path);
    usable = removed.ok();
    if (usable) repaired = *std::move(removed);
  }
  if (!usable) {
    const bool existed = fs::exists(path, ec);
    fs::remove_all(path, ec);  // missing or beyond repair: it is only a cache
    if (absl::Status s = CreateBare(path); !s.ok()) return s;
    repaired.clear();
    if (existed) repaired.push_back("mirror.git");
  }
  return std::shared_ptr<Mirror>(
      new Mirror(path, *std::move(client), *std::move(owner), std::move(repaired)));
}

absl::StatusOr<SyncResult> Mirror::SyncBranch(git_repository* repo, const std::string& branch,
                                              std::stop_token stop) const {
  absl::StatusOr<SyncResult> result =
      remote_.Sync(repo, fmt::format("refs/heads/{}", branch), std::move(stop));
  if (!result.ok() || !result->remote_tip.has_value()) return result;
  if (absl::Status s = SetRef(repo, TrackingRef(branch), *result->remote_tip); !s.ok()) return s;
  return result;
}

absl::Status Mirror::SetRef(git_repository* repo, const std::string& ref, const git_oid& id) const {
  std::lock_guard lock(ref_mu_);
  git_oid current;
  if (git_reference_name_to_id(&current, repo, ref.c_str()) == 0 && git_oid_equal(&current, &id)) {
    return absl::OkStatus();
  }
  git_reference* created = nullptr;
  if (int rc = git_reference_create(&created, repo, ref.c_str(), &id, 1, "talos-reconciler");
      rc < 0) {
    return GitError(rc, fmt::format("update {}", ref));
  }
  git_reference_free(created);
  return absl::OkStatus();
}

absl::Status Mirror::DeleteRef(git_repository* repo, const std::string& ref) const {
  std::lock_guard lock(ref_mu_);
  git_reference* raw = nullptr;
  const int found = git_reference_lookup(&raw, repo, ref.c_str());
  if (found == GIT_ENOTFOUND) return absl::OkStatus();
  if (found < 0) return GitError(found, fmt::format("read {}", ref));
  ReferencePtr reference(raw);
  if (int rc = git_reference_delete(reference.get()); rc < 0) {
    return GitError(rc, fmt::format("delete {}", ref));
  }
  return absl::OkStatus();
}

absl::StatusOr<RepositoryPtr> Mirror::Repository() const {
  git_repository* raw = nullptr;
  if (int rc = git_repository_open_bare(&raw, path_.c_str()); rc < 0) {
    return GitError(rc, fmt::format("open the mirror {}", path_.string()));
  }
  return RepositoryPtr(raw);
}

absl::Status Mirror::CompactIfNeeded(std::size_t max_packs, std::size_t whole_growth) const {
  std::lock_guard one_at_a_time(compact_mu_);
  std::vector<PackFile> rolled;
  std::vector<LooseObject> loose;
  std::optional<std::map<std::string, git_oid>> walked;  // set when pruning
  std::string kept;
  {
    // Writing the new pack only reads the mirror: every other operation goes on meanwhile.
    std::shared_lock shared(lock_);
    const std::vector<PackFile> packs = ListPacks(path_);
    loose = ListLooseObjects(path_);
    if (packs.size() <= max_packs && loose.size() <= kMaxLooseObjects) return absl::OkStatus();
    rolled = PacksToRollUp(packs, loose.size());
    const bool whole = !rolled.empty() && rolled.size() == packs.size() &&
                       WholeRewriteDue(packs, loose.size(), whole_growth);
    if (!whole && !rolled.empty() && rolled.size() == packs.size()) {
      rolled.erase(rolled.begin());  // the largest, kept until a whole rewrite is due
      if (rolled.size() < 2 && loose.empty()) return absl::OkStatus();  // one pack: as it is
    }
    if (rolled.empty() && loose.empty()) return absl::OkStatus();
    absl::StatusOr<RepositoryPtr> repo = Repository();
    if (!repo.ok()) return repo.status();
    absl::StatusOr<std::string> written;
    if (whole) {
      // Every pack would be rewritten anyway: pack what the refs reach (reachable_pack.h).
      absl::StatusOr<std::map<std::string, git_oid>> refs = RefTargets(repo->get());
      if (!refs.ok()) return refs.status();
      walked = *std::move(refs);
      written = WriteReachablePack(repo->get());
    } else {
      // Copied as they are where it can (object_pack.h).
      git_odb* raw_odb = nullptr;
      if (int rc = git_repository_odb(&raw_odb, repo->get()); rc < 0) {
        return GitError(rc, "open the mirror's object database");
      }
      const OdbPtr odb(raw_odb);
      written = CopyIntoOnePack(path_, odb.get(), rolled, loose);
    }
    if (!written.ok()) return written.status();
    kept = fmt::format("pack-{}", *written);
  }
  // Deleting is what no reader may see half done.
  std::unique_lock exclusive(lock_);
  // A roll-up's pack holds every object of what goes. A pruning pack holds what the refs
  // reached when it was written; what they reach now beyond it stays where it is.
  std::vector<git_oid> needed;
  if (walked) {
    absl::StatusOr<std::vector<git_oid>> in_kept =
        PackIndexIds(path_ / "objects/pack" / (kept + ".idx"));
    if (!in_kept.ok()) return in_kept.status();
    absl::StatusOr<RepositoryPtr> repo = Repository();
    if (!repo.ok()) return repo.status();
    absl::StatusOr<std::vector<git_oid>> outside =
        ReachableOutside(repo->get(), *in_kept, *walked);
    if (!outside.ok()) return outside.status();
    needed = *std::move(outside);
  }
  std::error_code ec;
  for (const PackFile& pack : rolled) {
    if (pack.pack.stem().string() == kept || PackHoldsAny(pack, needed)) continue;
    for (const char* extension : {".pack", ".idx", ".rev", ".keep"}) {
      fs::remove(fs::path(pack.pack).replace_extension(extension), ec);
    }
  }
  for (const LooseObject& object : loose) {
    if (Holds(needed, object.id)) continue;
    fs::remove(object.path, ec);
    fs::remove(object.path.parent_path(), ec);  // only once it is empty
  }
  // Writing the pack allocated every object it holds; glibc keeps the freed pages of its heap,
  // so without this the resident size stepped up at each compaction (soak_bench).
  malloc_trim(0);
  return absl::OkStatus();
}

std::size_t Mirror::WholeRewritePace::GrowthFor(Pace pace) {
  const bool quiet = pace == Pace::kQuiet && !busy_since_quiet_;
  busy_since_quiet_ = pace == Pace::kBusy;
  return quiet ? kWholeRewriteGrowth : kBusyWholeRewriteGrowth;
}

void Mirror::RequestCompaction(std::size_t max_packs, Pace pace) const {
  MutexLock lock(request_mu_);
  const std::size_t growth = pace_.GrowthFor(pace);
  requested_growth_ = requested_ ? std::min(requested_growth_, growth) : growth;
  requested_ = std::min(requested_.value_or(max_packs), max_packs);
  if (!compactor_.joinable()) {
    compactor_ = std::jthread([this](std::stop_token stop) {
      NameThisThread(kCompactorThreadName);
      CompactOnRequest(stop);
    });
  }
  requested_cv_.notify_all();
}

void Mirror::CompactOnRequest(std::stop_token stop) const {
  MutexLock lock(request_mu_);
  while (requested_cv_.wait(lock, stop, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(request_mu_) {
    return requested_.has_value();
  }) && !stop.stop_requested()) {
    const std::size_t max_packs = *std::exchange(requested_, std::nullopt);
    const std::size_t growth = requested_growth_;
    lock.unlock();
    (void)CompactIfNeeded(max_packs, growth);  // best effort: many packs still work
    lock.lock();
    ++compactions_;
    requested_cv_.notify_all();
  }
}

std::uint64_t Mirror::CompactionsDone() const {
  MutexLock lock(request_mu_);
  return compactions_;
}

}  // namespace tr::gitsource
