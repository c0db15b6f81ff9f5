// Internal to gitsource: reading a profile snapshot, and checking a commit's signature,
// straight from the object database of a repository (no work tree, no checkout).
//
// Thread-compatible: the repository handle is used by the calling thread only.
#pragma once

#include <git2.h>

#include "absl/status/statusor.h"
#include "gitsource/config.h"
#include "gitsource/snapshot.h"
#include "gitsource/sshsig.h"

namespace tr::gitsource {

// `reconciler.yaml` and `clusters/*.yaml` of the commit's tree: regular blobs only
// (symlinks, submodules and sub-trees are ignored, and so is everything elsewhere). A blob
// over `max_file_bytes` is returned oversized and unread (its size comes from the object
// header). Every entry is sized from its object header and the limits (count, total bytes)
// are checked before any blob is read. NotFound when the commit is not in the repository;
// FailedPrecondition past a limit, naming it and its value.
absl::StatusOr<ProfileSnapshot> ReadCommitSnapshot(git_repository* repo, const git_oid& commit,
                                                   const SnapshotLimits& limits);

// The commit's SSH signature checked against the allowed-signers file (re-read each time).
// FailedPrecondition, saying why, when the commit is unsigned, signed with OpenPGP or X.509,
// signed by a key that is not allowed, or wrongly signed; also when the allowed-signers
// file cannot be read or parsed.
absl::StatusOr<SignatureVerdict> VerifyCommitSignature(git_repository* repo, const git_oid& commit,
                                                       const SignatureVerification& config);

}  // namespace tr::gitsource
