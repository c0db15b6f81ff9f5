#include "gitsource/snapshot.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include "fmt/format.h"

namespace tr::gitsource {
namespace fs = std::filesystem;
namespace {

absl::StatusOr<core::SourceFile> ReadProfileFile(const fs::path& path, std::string relative,
                                                 const SnapshotLimits& limits) {
  core::SourceFile file;
  file.path = std::move(relative);
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec)
    return absl::UnavailableError(fmt::format("cannot stat {}: {}", path.string(), ec.message()));
  if (size > limits.max_file_bytes) {
    file.oversized = true;
    return file;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnavailableError(fmt::format("cannot open {}", path.string()));
  std::ostringstream content;
  content << in.rdbuf();
  file.content = std::move(content).str();
  return file;
}

}  // namespace

absl::StatusOr<ProfileSnapshot> ReadDirectorySnapshot(const fs::path& dir,
                                                      const SnapshotLimits& limits) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(fmt::format("no such directory: {}", dir.string()));
  }
  ProfileSnapshot snapshot;
  const fs::path defaults = dir / "reconciler.yaml";
  if (fs::is_regular_file(fs::symlink_status(defaults, ec))) {
    absl::StatusOr<core::SourceFile> file = ReadProfileFile(defaults, "reconciler.yaml", limits);
    if (!file.ok()) return file.status();
    snapshot.files.push_back(*std::move(file));
  }
  const fs::path clusters = dir / "clusters";
  if (fs::is_directory(fs::symlink_status(clusters, ec))) {
    for (const fs::directory_entry& entry : fs::directory_iterator(clusters, ec)) {
      if (!entry.is_regular_file() || entry.is_symlink()) continue;
      if (entry.path().extension() != ".yaml") continue;
      if (snapshot.files.size() >= limits.max_files) {
        return absl::FailedPreconditionError(
            fmt::format("more than {} profile files in {}", limits.max_files, clusters.string()));
      }
      absl::StatusOr<core::SourceFile> file =
          ReadProfileFile(entry.path(), "clusters/" + entry.path().filename().string(), limits);
      if (!file.ok()) return file.status();
      snapshot.files.push_back(*std::move(file));
    }
    if (ec)
      return absl::UnavailableError(
          fmt::format("cannot list {}: {}", clusters.string(), ec.message()));
  }
  std::sort(snapshot.files.begin(), snapshot.files.end(),
            [](const core::SourceFile& a, const core::SourceFile& b) { return a.path < b.path; });
  return snapshot;
}

}  // namespace tr::gitsource
