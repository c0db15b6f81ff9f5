// A snapshot of the profile files of a repository at one point: `clusters/*.yaml` and
// `reconciler.yaml`, with where they came from. Snapshots come from a Git commit (read
// straight from the object database) or, for `validate` and `plan` on a checkout, from a
// directory on disk.
//
// Values only; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/profile_set.h"

namespace tr::gitsource {

struct SnapshotOrigin {
  std::string commit;   // full hex id; empty for a directory
  std::string author;   // "Name <email>"; empty for a directory
  std::string message;  // commit message; empty for a directory
  // With signature verification: "<principals> (SHA256:<key fingerprint>)" of the allowed
  // signer that signed the commit. Empty otherwise.
  std::string signer;
};

struct ProfileSnapshot {
  SnapshotOrigin origin;
  std::vector<core::SourceFile> files;  // repository-relative paths, sorted
};

// What one snapshot may cost. Only `clusters/<name>.yaml` and `reconciler.yaml` are read, so
// the depth is fixed (no sub-directory is ever descended); the budget bounds the rest. Sizes
// come from the object header (or stat) before anything is read, so nothing past a budget is
// read. A pull request's head is untrusted: it gets PreviewSnapshotLimits().
struct SnapshotLimits {
  std::size_t max_file_bytes = 1 << 20;  // larger profile files are reported, not read
  std::size_t max_files = 5000;          // more profile files than this is an error
  // The bytes of every profile file read, summed over the tree entries: a blob that several
  // entries name counts once per entry (each becomes its own copy). Oversized files are not
  // read and count nothing; the clusters/ tree object itself counts.
  std::uint64_t max_total_bytes = std::uint64_t{64} << 20;
  // Names whose budget it is in errors: "watched branch", "pull request", "directory".
  std::string_view owner = "watched branch";
};

// The stricter limits for a pull request's proposed profiles: 500 files, 8 MiB in all.
SnapshotLimits PreviewSnapshotLimits();
// What fetching a pull request's head may download: twice the bytes its profiles may take (a
// head brings only what the mirror lacks, its own commits), so what a pull request makes the
// mirror keep while it is open is bounded by its own budget, not by the fetch cap of the
// watched branch.
inline std::uint64_t PreviewFetchBytes(const SnapshotLimits& preview) {
  return 2 * preview.max_total_bytes;
}

// FailedPrecondition naming the limit and its value when `files` profile files of `bytes`
// bytes in all exceed `limits`; OK otherwise.
absl::Status CheckSnapshotBudget(const SnapshotLimits& limits, std::size_t files,
                                 std::uint64_t bytes);

// Reads `<dir>/reconciler.yaml` (if present) and the regular `*.yaml` files directly in
// `<dir>/clusters`; anything else there is ignored. A file over the size limit is returned
// with empty content and `oversized` set, so the parser reports it. NotFound when `dir` does
// not exist; FailedPrecondition, naming the path, when `clusters`, `reconciler.yaml` or a
// profile in `clusters/` is a symbolic link (a checkout's link may point anywhere on the
// machine), and past a limit (naming it; checked from file sizes before reading).
absl::StatusOr<ProfileSnapshot> ReadDirectorySnapshot(const std::filesystem::path& dir,
                                                      const SnapshotLimits& limits = {});

}  // namespace tr::gitsource
