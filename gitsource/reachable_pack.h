// Internal to gitsource: the packs the mirror's compaction writes, and its pruning. When a
// roll-up would rewrite every pack anyway (pack_rollup.h), the mirror packs what its refs
// reach instead, so that what nothing reaches any more (a closed pull request's preview, a
// rejected status commit, a branch that was force-pushed) goes. The pack is written while
// other operations go on; refs that moved meanwhile are followed again, under the exclusive
// lock, before anything is deleted: what they reach outside the new pack is kept.
//
// Thread-compatible (one repository handle per call).
#pragma once

#include <git2.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::gitsource {

// Every ref under refs/ and the object it points to (symbolic refs resolved).
absl::StatusOr<std::map<std::string, git_oid>> RefTargets(git_repository* repo);

// Writes one pack of every object reachable from the refs; returns its id.
absl::StatusOr<std::string> WriteReachablePack(git_repository* repo);

// The objects the refs reach now that `in_pack` (sorted, as a pack index lists them) lacks,
// sorted. Only history the refs gained since `walked` (what the pack was written from) is
// followed; a tree the pack holds is not descended, since the pack holds all below it.
absl::StatusOr<std::vector<git_oid>> ReachableOutside(git_repository* repo,
                                                      const std::vector<git_oid>& in_pack,
                                                      const std::map<std::string, git_oid>& walked);

// Whether the sorted `ids` hold `id`.
bool Holds(const std::vector<git_oid>& ids, const git_oid& id);

}  // namespace tr::gitsource
