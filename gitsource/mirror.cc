#include "gitsource/mirror.h"

#include <malloc.h>

#include <mutex>
#include <system_error>
#include <vector>

#include "fmt/format.h"

namespace tr::gitsource {
namespace fs = std::filesystem;
namespace {

struct PackbuilderFree {
  void operator()(git_packbuilder* pb) const { git_packbuilder_free(pb); }
};
struct RevwalkFree {
  void operator()(git_revwalk* walk) const { git_revwalk_free(walk); }
};

absl::Status CreateBare(const fs::path& path) {
  git_repository* raw = nullptr;
  if (int rc = git_repository_init(&raw, path.c_str(), /*is_bare=*/1); rc < 0) {
    return GitError(rc, fmt::format("create the mirror {}", path.string()));
  }
  git_repository_free(raw);
  return absl::OkStatus();
}

std::vector<fs::path> Packs(const fs::path& repo) {
  std::vector<fs::path> packs;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(repo / "objects/pack", ec)) {
    if (entry.path().extension() == ".pack") packs.push_back(entry.path());
  }
  return packs;
}

// Writes one pack of everything reachable from any ref; returns its id.
absl::StatusOr<std::string> WriteFullPack(git_repository* repo) {
  git_revwalk* raw_walk = nullptr;
  if (int rc = git_revwalk_new(&raw_walk, repo); rc < 0) return GitError(rc, "walk the mirror");
  std::unique_ptr<git_revwalk, RevwalkFree> walk(raw_walk);
  if (int rc = git_revwalk_push_glob(walk.get(), "*"); rc < 0) {
    return GitError(rc, "walk the mirror's refs");
  }
  git_packbuilder* raw_pb = nullptr;
  if (int rc = git_packbuilder_new(&raw_pb, repo); rc < 0) return GitError(rc, "pack the mirror");
  std::unique_ptr<git_packbuilder, PackbuilderFree> pb(raw_pb);
  if (int rc = git_packbuilder_insert_walk(pb.get(), walk.get()); rc < 0) {
    return GitError(rc, "pack the mirror's objects");
  }
  if (int rc = git_packbuilder_write(pb.get(), nullptr, 0, nullptr, nullptr); rc < 0) {
    return GitError(rc, "write the mirror's pack");
  }
  return OidHex(*git_packbuilder_hash(pb.get()));
}

}  // namespace

std::string Mirror::TrackingRef(const std::string& branch) {
  return fmt::format("refs/remotes/origin/{}", branch);
}

absl::StatusOr<std::shared_ptr<Mirror>> Mirror::Open(const fs::path& state_dir,
                                                     RemoteConfig remote) {
  if (state_dir.empty()) return absl::InvalidArgumentError("no state directory is configured");
  absl::StatusOr<RemoteClient> client = RemoteClient::Create(std::move(remote));
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

absl::Status Mirror::CompactIfNeeded(std::size_t max_packs) const {
  if (Packs(path_).size() <= max_packs) return absl::OkStatus();
  std::unique_lock exclusive(lock_);
  const std::vector<fs::path> before = Packs(path_);
  if (before.size() <= max_packs) return absl::OkStatus();
  absl::StatusOr<RepositoryPtr> repo = Repository();
  if (!repo.ok()) return repo.status();
  absl::StatusOr<std::string> kept = WriteFullPack(repo->get());
  if (!kept.ok()) return kept.status();
  repo->reset();
  std::error_code ec;
  for (const fs::path& pack : before) {
    if (pack.stem().string() == fmt::format("pack-{}", *kept)) continue;
    for (const char* extension : {".pack", ".idx", ".rev", ".keep"}) {
      fs::remove(fs::path(pack).replace_extension(extension), ec);
    }
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(path_ / "objects", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() == 2 && entry.is_directory()) fs::remove_all(entry.path(), ec);
  }
  // Writing the pack allocated every object it holds; glibc keeps the freed pages of its heap,
  // so without this the resident size stepped up at each compaction (soak_bench).
  malloc_trim(0);
  return absl::OkStatus();
}

}  // namespace tr::gitsource
