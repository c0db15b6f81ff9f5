// Internal to gitsource: owning handles for libgit2 objects, and the one adapter that turns
// a libgit2 error (`int` + git_error_last()) into an absl::Status.
//
// Thread-safety: libgit2 handles are used by one thread at a time; `GitError` reads the
// calling thread's last libgit2 error and current NetworkOperation.
#pragma once

#include <git2.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tr::gitsource {

template <typename T, void (*Free)(T*)>
struct GitFree {
  void operator()(T* object) const { Free(object); }
};

using RepositoryPtr = std::unique_ptr<git_repository, GitFree<git_repository, git_repository_free>>;
using RemotePtr = std::unique_ptr<git_remote, GitFree<git_remote, git_remote_free>>;
using CommitPtr = std::unique_ptr<git_commit, GitFree<git_commit, git_commit_free>>;
using TreePtr = std::unique_ptr<git_tree, GitFree<git_tree, git_tree_free>>;
using TreeEntryPtr = std::unique_ptr<git_tree_entry, GitFree<git_tree_entry, git_tree_entry_free>>;
using BlobPtr = std::unique_ptr<git_blob, GitFree<git_blob, git_blob_free>>;
using ReferencePtr = std::unique_ptr<git_reference, GitFree<git_reference, git_reference_free>>;
using OdbPtr = std::unique_ptr<git_odb, GitFree<git_odb, git_odb_free>>;
using SignaturePtr = std::unique_ptr<git_signature, GitFree<git_signature, git_signature_free>>;

// A git_buf that frees itself.
struct GitBuffer {
  git_buf buf = GIT_BUF_INIT;
  GitBuffer() = default;
  GitBuffer(const GitBuffer&) = delete;
  GitBuffer& operator=(const GitBuffer&) = delete;
  ~GitBuffer() { git_buf_dispose(&buf); }
  std::string_view view() const { return {buf.ptr == nullptr ? "" : buf.ptr, buf.size}; }
};

// Initialises libgit2 with default settings unless ConfigureLibgit2 already ran.
void EnsureLibgit2();

// Converts a failed libgit2 call (`code` < 0) into a Status whose code says what the caller
// should do next. `action` names what was attempted ("fetch refs/heads/main"). When a
// NetworkOperation is current, its recorded failure decides the code (deadline, cancel,
// caps, host key, credentials) and its secrets are redacted from the message.
absl::Status GitError(int code, std::string_view action);

std::string OidHex(const git_oid& oid);

// The commit `id`; an error naming it when the repository does not have it.
absl::StatusOr<CommitPtr> LookupCommit(git_repository* repo, const git_oid& id);

}  // namespace tr::gitsource
