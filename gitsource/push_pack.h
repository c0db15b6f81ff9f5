// Internal to gitsource: how libgit2 packs what this process pushes.
//
// libgit2 sends no thin packs, so the pack of a push holds whole objects, and its delta search
// compares each one with the ten before it of the same type and near its size: in a status
// commit that is every changed cluster's status file against the other clusters'. That search
// was 14% of the daemon's CPU in fleet_scale_bench --clusters 200 (docs/benchmarks.md, "Watches
// that hold at 1,000 clusters"). A status file is small YAML that compresses well on its own,
// the remote packs again at its next repack, and the mirror's own compaction (reachable_pack.h,
// on a repository handle of its own) keeps its delta search: so pushes go without one.
#pragma once

#include <git2.h>

#include "absl/status/status.h"

namespace tr::gitsource {

// Makes the packs that `repo`'s handle builds from now on skip the delta search, through a
// configuration file of the highest level (GIT_CONFIG_LEVEL_APP) that is read by this handle
// only: it is written once beside the repository's own `config`, which is not changed.
absl::Status PackWithoutDeltas(git_repository* repo);

}  // namespace tr::gitsource
