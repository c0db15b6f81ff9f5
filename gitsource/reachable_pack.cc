#include "gitsource/reachable_pack.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <set>

#include "fmt/format.h"
#include "gitsource/libgit2_util.h"

namespace tr::gitsource {
namespace {

using PackbuilderPtr = std::unique_ptr<git_packbuilder, GitFree<git_packbuilder, git_packbuilder_free>>;
using RevwalkPtr = std::unique_ptr<git_revwalk, GitFree<git_revwalk, git_revwalk_free>>;

bool OidLess(const git_oid& a, const git_oid& b) { return git_oid_cmp(&a, &b) < 0; }

absl::StatusOr<RevwalkPtr> NewWalk(git_repository* repo) {
  git_revwalk* raw = nullptr;
  if (int rc = git_revwalk_new(&raw, repo); rc < 0) return GitError(rc, "walk the mirror");
  return RevwalkPtr(raw);
}

// Collects what a tree reaches outside the pack.
class Outside {
 public:
  Outside(git_repository* repo, const std::vector<git_oid>& in_pack)
      : repo_(repo), in_pack_(in_pack) {}

  absl::Status AddCommit(const git_oid& id) {
    if (!Add(id)) return absl::OkStatus();
    git_commit* raw = nullptr;
    if (int rc = git_commit_lookup(&raw, repo_, &id); rc < 0) {
      return GitError(rc, fmt::format("read commit {}", OidHex(id)));
    }
    CommitPtr commit(raw);
    return AddTree(*git_commit_tree_id(commit.get()));
  }

  std::vector<git_oid> Sorted() const { return {found_.begin(), found_.end()}; }

 private:
  struct Less {
    bool operator()(const git_oid& a, const git_oid& b) const { return OidLess(a, b); }
  };

  // False when the pack or an earlier step has it already.
  bool Add(const git_oid& id) { return !Holds(in_pack_, id) && found_.insert(id).second; }

  absl::Status AddTree(const git_oid& id) {
    if (!Add(id)) return absl::OkStatus();
    git_tree* raw = nullptr;
    if (int rc = git_tree_lookup(&raw, repo_, &id); rc < 0) {
      return GitError(rc, fmt::format("read tree {}", OidHex(id)));
    }
    TreePtr tree(raw);
    for (std::size_t i = 0; i < git_tree_entrycount(tree.get()); ++i) {
      const git_tree_entry* entry = git_tree_entry_byindex(tree.get(), i);
      const git_object_t type = git_tree_entry_type(entry);
      if (type == GIT_OBJECT_TREE) {
        if (absl::Status s = AddTree(*git_tree_entry_id(entry)); !s.ok()) return s;
      } else if (type == GIT_OBJECT_BLOB) {
        Add(*git_tree_entry_id(entry));
      }  // a submodule's commit is not in this repository
    }
    return absl::OkStatus();
  }

  git_repository* repo_;
  const std::vector<git_oid>& in_pack_;
  std::set<git_oid, Less> found_;
};

}  // namespace

bool Holds(const std::vector<git_oid>& ids, const git_oid& id) {
  return std::binary_search(ids.begin(), ids.end(), id, OidLess);
}

absl::StatusOr<std::map<std::string, git_oid>> RefTargets(git_repository* repo) {
  std::vector<std::string> names;
  const int rc = git_reference_foreach_name(
      repo,
      [](const char* name, void* payload) {
        static_cast<std::vector<std::string>*>(payload)->emplace_back(name);
        return 0;
      },
      &names);
  if (rc < 0) return GitError(rc, "list the mirror's refs");
  std::map<std::string, git_oid> targets;
  for (const std::string& name : names) {
    git_oid id;
    if (name.rfind("refs/", 0) == 0 && git_reference_name_to_id(&id, repo, name.c_str()) == 0) {
      targets.emplace(name, id);
    }
  }
  return targets;
}

// Writes a pack into the repository's objects/pack of what `insert` gives the builder
// (libgit2's code on failure); returns its id.
absl::StatusOr<std::string> WritePackOf(git_repository* repo,
                                        const std::function<int(git_packbuilder*)>& insert) {
  git_packbuilder* raw = nullptr;
  if (int rc = git_packbuilder_new(&raw, repo); rc < 0) return GitError(rc, "pack the mirror");
  PackbuilderPtr pb(raw);
  if (int rc = insert(pb.get()); rc < 0) return GitError(rc, "pack the mirror's objects");
  if (int rc = git_packbuilder_write(pb.get(), nullptr, 0, nullptr, nullptr); rc < 0) {
    return GitError(rc, "write the mirror's pack");
  }
  return OidHex(*git_packbuilder_hash(pb.get()));
}

absl::StatusOr<std::string> WriteReachablePack(git_repository* repo) {
  absl::StatusOr<RevwalkPtr> walk = NewWalk(repo);
  if (!walk.ok()) return walk.status();
  if (int rc = git_revwalk_push_glob(walk->get(), "refs/*"); rc < 0) {
    return GitError(rc, "walk the mirror's refs");
  }
  return WritePackOf(repo, [&](git_packbuilder* pb) {
    return git_packbuilder_insert_walk(pb, walk->get());
  });
}

absl::StatusOr<std::vector<git_oid>> ReachableOutside(git_repository* repo,
                                                      const std::vector<git_oid>& in_pack,
                                                      const std::map<std::string, git_oid>& walked) {
  absl::StatusOr<std::map<std::string, git_oid>> now = RefTargets(repo);
  if (!now.ok()) return now.status();
  absl::StatusOr<RevwalkPtr> walk = NewWalk(repo);
  if (!walk.ok()) return walk.status();
  bool moved = false;
  for (const auto& [name, id] : *now) {
    const auto before = walked.find(name);
    if (before != walked.end() && git_oid_equal(&before->second, &id)) continue;
    moved = true;
    if (int rc = git_revwalk_push(walk->get(), &id); rc < 0) {
      return GitError(rc, fmt::format("walk {}", name));
    }
  }
  if (!moved) return std::vector<git_oid>{};
  for (const auto& [name, id] : walked) {
    if (Holds(in_pack, id)) (void)git_revwalk_hide(walk->get(), &id);
  }
  Outside outside(repo, in_pack);
  git_oid id;
  int rc = 0;
  while ((rc = git_revwalk_next(&id, walk->get())) == 0) {
    if (absl::Status s = outside.AddCommit(id); !s.ok()) return s;
  }
  if (rc != GIT_ITEROVER) return GitError(rc, "walk the refs that moved");
  return outside.Sorted();
}

}  // namespace tr::gitsource
