// Internal to gitsource: what the mirror's compaction rolls up. libgit2 cannot gc, so every
// fetch and every status commit leaves a pack, and other writes leave loose objects.
// Rewriting everything into one pack costs more as the history grows, so the compaction
// keeps the packs in a geometric progression instead (each kept pack holds at least twice the
// objects of all smaller ones together, as `git repack --geometric=2` does) and rolls the
// rest, with the loose objects, into one new pack. An object is copied about log2(objects)
// times in the mirror's life, and most compactions read only what came since the last.
//
// The roll-up is by content, not by reachability: the new pack holds every object of what it
// replaces, so deleting those never loses an object someone still needs, whatever was
// written meanwhile. What nothing reaches any more stays (a rejected status commit, a branch
// that was force-pushed): the mirror is a cache and can be deleted to drop it.
//
// Thread-compatible (plain functions on the file system).
#pragma once

#include <git2.h>

#include <cstdint>
#include <filesystem>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::gitsource {

struct PackFile {
  std::filesystem::path pack;  // objects/pack/pack-<id>.pack
  std::uint32_t objects = 0;   // from its index
};

struct LooseObject {
  std::filesystem::path path;  // objects/ab/cdef…
  git_oid id;
};

// The packs of the repository at `repo` that have an index, with their object counts.
std::vector<PackFile> ListPacks(const std::filesystem::path& repo);
// The loose objects of the repository at `repo` (files objects/xx/<38 hex digits>).
std::vector<LooseObject> ListLooseObjects(const std::filesystem::path& repo);
// One object as a pack's index lists it.
struct PackIndexEntry {
  git_oid id;
  std::uint32_t crc = 0;     // of the entry's bytes in the pack
  std::uint64_t offset = 0;  // where the entry starts in the pack
};

// What a version 2 pack index lists, in its order (by id). InvalidArgument for anything else.
absl::StatusOr<std::vector<PackIndexEntry>> PackIndexEntries(const std::filesystem::path& idx);
// The object ids a version 2 pack index lists. InvalidArgument for anything else.
absl::StatusOr<std::vector<git_oid>> PackIndexIds(const std::filesystem::path& idx);

// The packs to roll up with `loose` loose objects: sorted by size, every pack from the first
// that holds fewer than twice the objects of all smaller ones and the loose ones together
// (the largest first). Empty when the packs already form that progression.
std::vector<PackFile> PacksToRollUp(std::vector<PackFile> packs, std::size_t loose);

// Whether a compaction that would roll every pack up should rewrite the whole mirror instead
// (reachable_pack.h): once it holds `growth` times the objects of its largest pack, the last
// whole rewrite's. Until then the largest is kept and the rest rolled up as they are. A whole
// rewrite is libgit2's pack builder searching a delta for every object, where a roll-up copies
// bytes: rewriting whenever every pack rolls (growth 1.5) searched each object's delta about
// three times in the mirror's life; growth 4 does it 4/3 times, at the price of the objects
// written since the last rewrite being kept without deltas (docs/benchmarks.md).
bool WholeRewriteDue(const std::vector<PackFile>& packs, std::size_t loose, std::size_t growth);

}  // namespace tr::gitsource
