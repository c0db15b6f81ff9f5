#include "gitsource/snapshot.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include "fmt/format.h"

namespace tr::gitsource {
namespace fs = std::filesystem;
namespace {

// A profile file found on disk, sized before anything is read.
struct FoundFile {
  fs::path path;
  std::string relative;
  std::uintmax_t size = 0;
};

std::string Mebibytes(std::uint64_t bytes) {
  if (bytes % (1 << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

absl::Status SymlinkError(const fs::path& path) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(path, ec);
  return absl::FailedPreconditionError(fmt::format(
      "{} is a symbolic link{}; profiles are read from regular files and directories only",
      path.string(), ec ? "" : fmt::format(" (to {})", target.string())));
}

absl::StatusOr<FoundFile> Stat(const fs::path& path, std::string relative) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec)
    return absl::UnavailableError(fmt::format("cannot stat {}: {}", path.string(), ec.message()));
  return FoundFile{path, std::move(relative), size};
}

absl::StatusOr<core::SourceFile> ReadProfileFile(const FoundFile& found,
                                                 const SnapshotLimits& limits) {
  core::SourceFile file;
  file.path = found.relative;
  if (found.size > limits.max_file_bytes) {
    file.oversized = true;
    return file;
  }
  std::ifstream in(found.path, std::ios::binary);
  if (!in) return absl::UnavailableError(fmt::format("cannot open {}", found.path.string()));
  // At most what stat said, so a file that grows meanwhile cannot exceed the budget.
  file.content.resize(static_cast<std::size_t>(found.size));
  in.read(file.content.data(), static_cast<std::streamsize>(found.size));
  file.content.resize(static_cast<std::size_t>(in.gcount()));
  return file;
}

// The `*.yaml` entries of `dir` (clusters/ or schematics/), sized; symlinks are errors, other
// entries ignored.
absl::Status ListYamlFiles(const fs::path& dir, std::string_view name,
                           const SnapshotLimits& limits, std::vector<FoundFile>& found) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".yaml") continue;
    std::error_code type_ec;
    if (entry.is_symlink(type_ec)) return SymlinkError(entry.path());
    if (!entry.is_regular_file(type_ec)) continue;
    absl::StatusOr<FoundFile> file =
        Stat(entry.path(), fmt::format("{}/{}", name, entry.path().filename().string()));
    if (!file.ok()) return file.status();
    found.push_back(*std::move(file));
    // Checked while listing, so a directory of millions of entries is not all held.
    if (absl::Status s = CheckSnapshotBudget(limits, found.size(), 0); !s.ok()) return s;
  }
  if (ec) {
    return absl::UnavailableError(
        fmt::format("cannot list {}: {}", dir.string(), ec.message()));
  }
  return absl::OkStatus();
}

// reconciler.yaml, clusters/*.yaml and schematics/*.yaml of `dir`, sized, without reading
// them.
absl::StatusOr<std::vector<FoundFile>> FindProfileFiles(const fs::path& dir,
                                                        const SnapshotLimits& limits) {
  std::vector<FoundFile> found;
  std::error_code ec;
  const fs::path defaults = dir / "reconciler.yaml";
  const fs::file_status defaults_status = fs::symlink_status(defaults, ec);
  if (fs::is_symlink(defaults_status)) return SymlinkError(defaults);
  if (fs::is_regular_file(defaults_status)) {
    absl::StatusOr<FoundFile> file = Stat(defaults, "reconciler.yaml");
    if (!file.ok()) return file.status();
    found.push_back(*std::move(file));
  }
  for (std::string_view name : {"clusters", "schematics"}) {
    const fs::path sub = dir / name;
    const fs::file_status sub_status = fs::symlink_status(sub, ec);
    if (fs::is_symlink(sub_status)) return SymlinkError(sub);
    if (fs::is_directory(sub_status)) {
      if (absl::Status s = ListYamlFiles(sub, name, limits, found); !s.ok()) return s;
    }
  }
  return found;
}

}  // namespace

SnapshotLimits PreviewSnapshotLimits() {
  SnapshotLimits limits;
  limits.max_files = 500;
  limits.max_total_bytes = std::uint64_t{8} << 20;
  limits.owner = "pull request";
  return limits;
}

absl::Status CheckSnapshotBudget(const SnapshotLimits& limits, std::size_t files,
                                 std::uint64_t bytes) {
  if (files > limits.max_files) {
    return absl::FailedPreconditionError(
        fmt::format("more than {} profile files: over the {} limit of {} files per snapshot",
                    limits.max_files, limits.owner, limits.max_files));
  }
  if (bytes > limits.max_total_bytes) {
    return absl::FailedPreconditionError(fmt::format(
        "{} profile files of {} bytes in all: over the {} snapshot budget of {} ({} bytes)",
        files, bytes, limits.owner, Mebibytes(limits.max_total_bytes), limits.max_total_bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<ProfileSnapshot> ReadDirectorySnapshot(const fs::path& dir,
                                                      const SnapshotLimits& limits) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(fmt::format("no such directory: {}", dir.string()));
  }
  absl::StatusOr<std::vector<FoundFile>> found = FindProfileFiles(dir, limits);
  if (!found.ok()) return found.status();
  std::uint64_t total = 0;
  for (const FoundFile& file : *found) {
    if (file.size <= limits.max_file_bytes) total += file.size;
  }
  if (absl::Status s = CheckSnapshotBudget(limits, found->size(), total); !s.ok()) {
    return absl::Status(s.code(), fmt::format("{}: {}", dir.string(), std::string(s.message())));
  }
  ProfileSnapshot snapshot;
  for (const FoundFile& file : *found) {
    absl::StatusOr<core::SourceFile> read = ReadProfileFile(file, limits);
    if (!read.ok()) return read.status();
    snapshot.files.push_back(*std::move(read));
  }
  std::sort(snapshot.files.begin(), snapshot.files.end(),
            [](const core::SourceFile& a, const core::SourceFile& b) { return a.path < b.path; });
  return snapshot;
}

}  // namespace tr::gitsource
