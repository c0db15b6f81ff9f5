#include "gitsource/push_pack.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>

#include "fmt/format.h"
#include "gitsource/libgit2_util.h"

namespace tr::gitsource {
namespace {

using ConfigPtr = std::unique_ptr<git_config, GitFree<git_config, git_config_free>>;

// libgit2 (1.5 up to its main branch, pack-objects.c) reads its big-file threshold, above which
// an object is not a delta candidate, from `pack.deltaCacheSize`; git names it
// `pack.bigFileThreshold`. Both are set, so that a libgit2 that reads the right key does the
// same. A threshold of 1 byte leaves no object to search (objects under 50 bytes never are).
constexpr char kNoDeltaConfig[] =
    "# Written by talos-reconciler: the packs of its pushes skip the delta search.\n"
    "[pack]\n"
    "\tdeltaCacheSize = 1\n"
    "\tbigFileThreshold = 1\n";

absl::Status WriteOnce(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return absl::OkStatus();
  // Another handle may write it at the same time: each writes its own file and renames it.
  const std::filesystem::path part = fmt::format("{}.{}.part", path.string(), ::getpid());
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << kNoDeltaConfig;
    if (!out.flush()) {
      return absl::InternalError(fmt::format("cannot write {}", part.string()));
    }
  }
  std::filesystem::rename(part, path, ec);
  if (ec) {
    std::filesystem::remove(part, ec);
    return absl::InternalError(fmt::format("cannot write {}", path.string()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PackWithoutDeltas(git_repository* repo) {
  const std::filesystem::path path =
      std::filesystem::path(git_repository_path(repo)) / "push-pack.config";
  if (absl::Status written = WriteOnce(path); !written.ok()) return written;
  git_config* raw = nullptr;
  if (int rc = git_repository_config(&raw, repo); rc < 0) {
    return GitError(rc, "read the repository's configuration");
  }
  const ConfigPtr config(raw);
  const int rc = git_config_add_file_ondisk(config.get(), path.c_str(), GIT_CONFIG_LEVEL_APP,
                                            repo, /*force=*/0);
  if (rc == GIT_EEXISTS) return absl::OkStatus();  // this handle pushed before
  if (rc < 0) return GitError(rc, fmt::format("read {}", path.string()));
  return absl::OkStatus();
}

}  // namespace tr::gitsource
