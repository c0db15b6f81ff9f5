#include "gitsource/mirror_repair.h"

#include <fcntl.h>
#include <git2.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <iterator>
#include <system_error>

#include "fmt/format.h"
#include "gitsource/libgit2_util.h"

namespace tr::gitsource {
namespace fs = std::filesystem;
namespace {

bool IsHexId(const std::string& text) {
  if (text.size() != GIT_OID_HEXSZ) return false;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Lock files, temporary files and packs without an index, anywhere in the repository.
void RemoveLeftovers(const fs::path& repo, std::vector<std::string>& removed) {
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (auto it = fs::recursive_directory_iterator(repo, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const fs::path& file = it->path();
    const std::string name = file.filename().string();
    const bool lock = file.extension() == ".lock";
    const bool temporary = name.starts_with("tmp_") || name.starts_with("pack_git2_");
    const bool orphan_pack =
        file.extension() == ".pack" && !fs::exists(fs::path(file).replace_extension(".idx"), ec);
    const bool orphan_index =
        file.extension() == ".idx" && !fs::exists(fs::path(file).replace_extension(".pack"), ec);
    if (lock || temporary || orphan_pack || orphan_index) doomed.push_back(file);
  }
  for (const fs::path& file : doomed) {
    if (fs::remove(file, ec)) removed.push_back(fs::relative(file, repo, ec).string());
  }
}

// Loose refs under refs/ that are not a full object id or a symbolic ref, or whose object is
// missing, are removed.
void RemoveBrokenRefs(const fs::path& repo, git_odb* odb, std::vector<std::string>& removed) {
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (auto it = fs::recursive_directory_iterator(repo / "refs", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::ifstream in(it->path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (text.starts_with("ref: ")) continue;
    git_oid id;
    const bool valid = IsHexId(text) && git_oid_fromstr(&id, text.c_str()) == 0 &&
                       git_odb_exists(odb, &id) == 1;
    if (!valid) doomed.push_back(it->path());
  }
  for (const fs::path& file : doomed) {
    if (fs::remove(file, ec)) removed.push_back(fs::relative(file, repo, ec).string());
  }
}

int CountRef(const char* /*name*/, void* /*payload*/) { return 0; }

}  // namespace

absl::StatusOr<MirrorOwnerLock> MirrorOwnerLock::Acquire(const fs::path& state_dir) {
  const fs::path file = state_dir / "mirror.owner";
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InvalidArgumentError(fmt::format("cannot open {}: {}", file.string(),
                                                  std::error_code(errno, std::generic_category())
                                                      .message()));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return absl::FailedPreconditionError(fmt::format(
        "the state directory {} is in use by another talos-reconciler process", state_dir.string()));
  }
  return MirrorOwnerLock(fd);
}

MirrorOwnerLock::~MirrorOwnerLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

absl::StatusOr<std::vector<std::string>> RepairMirror(const fs::path& path) {
  std::vector<std::string> removed;
  RemoveLeftovers(path, removed);
  git_repository* raw = nullptr;
  if (int rc = git_repository_open_bare(&raw, path.c_str()); rc < 0) {
    return absl::InternalError(GitError(rc, "open the mirror").message());
  }
  RepositoryPtr repo(raw);
  git_odb* odb = nullptr;
  if (int rc = git_repository_odb(&odb, repo.get()); rc < 0) {
    return absl::InternalError(GitError(rc, "open the mirror's objects").message());
  }
  RemoveBrokenRefs(path, odb, removed);
  git_odb_free(odb);
  // Every remaining ref (packed ones included) must be readable.
  if (int rc = git_reference_foreach_name(repo.get(), CountRef, nullptr); rc < 0) {
    return absl::InternalError(GitError(rc, "list the mirror's refs").message());
  }
  return removed;
}

}  // namespace tr::gitsource
