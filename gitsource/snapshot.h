// A snapshot of the profile files of a repository at one point: `clusters/*.yaml` and
// `reconciler.yaml`, with where they came from. Snapshots come from a Git commit (read
// straight from the object database) or, for `validate` and `plan` on a checkout, from a
// directory on disk.
//
// Values only; thread-compatible.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
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

struct SnapshotLimits {
  std::size_t max_file_bytes = 1 << 20;  // larger profile files are reported, not read
  std::size_t max_files = 5000;          // more profile files than this is an error
};

// Reads `<dir>/reconciler.yaml` (if present) and the regular `*.yaml` files directly in
// `<dir>/clusters`. Symlinks and anything outside those two places are ignored. A file over
// the size limit is returned with empty content and `oversized` set, so the parser reports it.
// NotFound when `dir` does not exist; FailedPrecondition past `max_files`.
absl::StatusOr<ProfileSnapshot> ReadDirectorySnapshot(const std::filesystem::path& dir,
                                                      const SnapshotLimits& limits = {});

}  // namespace tr::gitsource
