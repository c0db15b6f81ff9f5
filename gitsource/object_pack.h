// Internal to gitsource: writes objects whose ids are known as one pack (version 2, no
// deltas) with its index (version 2) into a repository's objects/pack. A status commit's few
// hundred new objects then cost one file and one deflate each, not one loose file each, whose
// creation is most of a commit's CPU (the file system's inode work).
//
// The pack file is written first and its index last, each under a temporary name renamed into
// place: libgit2, git and the compaction (pack_rollup.h) see a pack only once it has an index.
//
// Thread-compatible (plain functions on the file system).
#pragma once

#include <git2.h>

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gitsource/pack_rollup.h"

namespace tr::gitsource {

struct PackObject {
  git_oid id;
  git_object_t type = GIT_OBJECT_INVALID;  // commit, tree, blob or tag
  std::string data;
};

// Writes `objects` (distinct ids) as objects/pack/pack-<checksum>.{pack,idx} of the bare
// repository at `repo`; returns the pack's checksum in hexadecimal. Internal for an I/O error.
absl::StatusOr<std::string> WriteObjectPack(const std::filesystem::path& repo,
                                            std::span<const PackObject> objects);

// Rolls `packs` and `loose` (of the bare repository at `repo`, whose object database is `odb`)
// up into one new pack, and returns its checksum. A pack is copied as it is, entries and
// all, with no object read, inflated or deflated again, and its index entries moved; the
// largest packs first. The objects of a pack that shares one with a pack copied before it,
// and the loose objects, are read through `odb` and packed one by one; an object is in the
// new pack once. Internal for an I/O error or a pack that does not match its index;
// InvalidArgument for an index that is not version 2.
absl::StatusOr<std::string> CopyIntoOnePack(const std::filesystem::path& repo, git_odb* odb,
                                            const std::vector<PackFile>& packs,
                                            const std::vector<LooseObject>& loose);

}  // namespace tr::gitsource
