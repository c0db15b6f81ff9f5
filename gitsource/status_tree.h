// Internal to gitsource: the status branch's content. Checking paths under status/,
// building a commit that applies a set of file changes on top of a parent, and reading the
// status files of a commit.
//
// Thread-compatible: the repository handle is used by the calling thread only.
#pragma once

#include <git2.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "gitsource/new_objects.h"
#include "gitsource/status_writer.h"

namespace tr::gitsource {

// OK for "status/<name>[/<name>…]" whose parts are ordinary file names; InvalidArgument
// otherwise (absolute, "..", ".git", empty parts, control characters, a backslash).
absl::Status ValidateStatusPath(const std::string& path);

struct StatusCommitSpec {
  std::optional<git_oid> parent;  // nullopt: a root commit
  std::map<std::string, std::optional<std::string>> files;
  std::string author_name;
  std::string author_email;
  std::chrono::system_clock::time_point when;
  std::string message;
};

// Writes the tree of `parent` with `files` applied and a commit of it. Returns nullopt when
// the tree would not change (nothing to commit), else the new commit's id. No ref moves.
// With `fresh` (attached to `repo`), the files' blobs are written through it.
absl::StatusOr<std::optional<git_oid>> CreateStatusCommit(git_repository* repo,
                                                          const StatusCommitSpec& spec,
                                                          NewObjects* fresh = nullptr);

// OK when `commit`'s status/ tree (if any) is within the listing limits (StatusReadLimits);
// ResourceExhausted (IsStatusTreeOverBudget) otherwise, without loading a listing over budget.
absl::Status CheckStatusTree(git_repository* repo, const git_oid& commit,
                             const StatusReadLimits& limits);

// The regular blobs directly under status/ of `commit`, by path, within `limits`: a file
// past a limit is listed as skipped, unread (sizes come from object headers first); a tree
// over the listing limits is refused as CheckStatusTree says.
absl::StatusOr<StatusFiles> ReadStatusFiles(git_repository* repo, const git_oid& commit,
                                            const StatusReadLimits& limits);

// The content of the regular file at `path` in `commit`; nullopt when there is none there, or
// it is larger than `max_bytes` (sized from its header, unread).
absl::StatusOr<std::optional<std::string>> ReadStatusFileAt(git_repository* repo,
                                                            const git_oid& commit,
                                                            const std::string& path,
                                                            std::size_t max_bytes);

}  // namespace tr::gitsource
