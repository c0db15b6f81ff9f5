// Internal to gitsource: keeps the objects an operation writes through a repository handle in
// memory, ahead of the loose files, so that they can be stored as one pack (object_pack.h).
// Objects the repository already has are not written again (libgit2 asks every store first),
// so what it keeps is exactly what is new. They read back through the handle at once.
//
// Thread-compatible, like the repository handle it belongs to.
#pragma once

#include <git2.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "gitsource/object_pack.h"

namespace tr::gitsource {

class NewObjects {
 public:
  // Put ahead of the stores of `repo`'s object database, which owns it: valid while the
  // repository handle is open. Every object written through the handle afterwards is kept.
  static absl::StatusOr<NewObjects*> Attach(git_repository* repo);

  // Stores the objects written since the last call as one pack in the bare repository at
  // `repo_dir` (nothing when there are none); they still read through the handle.
  absl::Status StoreAsPack(const std::filesystem::path& repo_dir);

  // Writes an object as libgit2's own write would, without its rescan of the packs directory
  // for every object no store has (a status commit has one blob per cluster that changed).
  // An object in a pack added since the handle last looked is kept again: a harmless copy.
  absl::StatusOr<git_oid> Add(std::string_view data, git_object_t type);

  // Called by the object database (the backend's callbacks).
  int Write(const git_oid& id, const void* data, std::size_t size, git_object_t type);
  const PackObject* Find(const git_oid& id) const;

 private:
  explicit NewObjects(git_odb* odb) : odb_(odb) {}

  git_odb* const odb_;  // the handle's object database, which owns this

  std::vector<PackObject> objects_;
  std::unordered_map<std::string, std::size_t> by_id_;  // raw id → index in objects_
  std::size_t stored_ = 0;                              // objects_[0, stored_) are in a pack
};

}  // namespace tr::gitsource
