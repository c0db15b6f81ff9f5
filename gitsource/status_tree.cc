#include "gitsource/status_tree.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "absl/strings/cord.h"
#include "core/status_yaml.h"
#include "core/text.h"
#include "fmt/format.h"
#include "gitsource/libgit2_util.h"

namespace tr::gitsource {
namespace {

struct TreebuilderFree {
  void operator()(git_treebuilder* b) const { git_treebuilder_free(b); }
};

bool IsOrdinaryName(std::string_view part) {
  if (part.empty() || part == "." || part == ".." || part.size() > 255) return false;
  std::string lower(part);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == ".git") return false;
  return std::none_of(part.begin(), part.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\';
  });
}

absl::StatusOr<TreePtr> BaseTree(git_repository* repo, const std::optional<git_oid>& parent) {
  git_oid tree_id;
  if (parent.has_value()) {
    git_commit* raw = nullptr;
    if (int rc = git_commit_lookup(&raw, repo, &*parent); rc < 0) {
      return GitError(rc, "read the status branch's tip");
    }
    CommitPtr commit(raw);
    tree_id = *git_commit_tree_id(commit.get());
  } else {
    git_treebuilder* raw = nullptr;
    if (int rc = git_treebuilder_new(&raw, repo, nullptr); rc < 0) {
      return GitError(rc, "build an empty tree");
    }
    std::unique_ptr<git_treebuilder, TreebuilderFree> builder(raw);
    if (int rc = git_treebuilder_write(&tree_id, builder.get()); rc < 0) {
      return GitError(rc, "write an empty tree");
    }
  }
  git_tree* tree = nullptr;
  if (int rc = git_tree_lookup(&tree, repo, &tree_id); rc < 0) {
    return GitError(rc, "read the status tree");
  }
  return TreePtr(tree);
}

bool HasPath(git_tree* tree, const std::string& path) {
  git_tree_entry* entry = nullptr;
  if (git_tree_entry_bypath(&entry, tree, path.c_str()) != 0) return false;
  git_tree_entry_free(entry);
  return true;
}

// Whether `size` more bytes fit the read limits after `bytes` bytes read; the
// reason it does not otherwise.
std::optional<SkippedStatusFile> Admit(const StatusReadLimits& limits, std::uint64_t bytes,
                                       std::size_t size) {
  if (size > limits.max_file_bytes) {
    return SkippedStatusFile{"", "too_large",
                             fmt::format("{} bytes, over the limit of {} bytes per status file",
                                         size, limits.max_file_bytes)};
  }
  if (bytes + size > limits.max_total_bytes) {
    return SkippedStatusFile{
        "", "over_budget",
        fmt::format("past the budget of {} bytes of status files", limits.max_total_bytes)};
  }
  return std::nullopt;
}

absl::Status ReadStatusBlob(git_repository* repo, const git_tree_entry* entry,
                            std::string path, StatusFiles& out) {
  git_blob* raw = nullptr;
  if (int rc = git_blob_lookup(&raw, repo, git_tree_entry_id(entry)); rc < 0) {
    return GitError(rc, "read a status file");
  }
  BlobPtr blob(raw);
  out.files[std::move(path)] =
      std::string(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                  static_cast<std::size_t>(git_blob_rawsize(blob.get())));
  return absl::OkStatus();
}

// Reads the regular blobs of the status/ tree in path order, each sized before it is read.
// A blob named again under another path is skipped unread: a status names one cluster, so
// its content can be the status of at most one of those paths.
absl::Status CollectFiles(git_repository* repo, git_odb* odb, git_tree* tree,
                          const StatusReadLimits& limits, StatusFiles& out) {
  std::uint64_t bytes = 0;
  std::map<std::string, std::string> first_path;  // raw blob id -> the path it was read at
  const size_t count = git_tree_entrycount(tree);
  for (size_t i = 0; i < count; ++i) {
    const git_tree_entry* entry = git_tree_entry_byindex(tree, i);
    const git_filemode_t mode = git_tree_entry_filemode(entry);
    if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE) continue;
    std::string path = fmt::format("status/{}", git_tree_entry_name(entry));
    const std::string id(reinterpret_cast<const char*>(git_tree_entry_id(entry)->id),
                         GIT_OID_RAWSZ);
    if (auto seen = first_path.find(id); seen != first_path.end()) {
      out.skipped.push_back({std::move(path), "duplicate",
                             fmt::format("the same content as {}", seen->second)});
      continue;
    }
    first_path.emplace(id, path);
    size_t size = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    if (int rc = git_odb_read_header(&size, &type, odb, git_tree_entry_id(entry)); rc < 0) {
      return GitError(rc, fmt::format("read {}", path));
    }
    if (std::optional<SkippedStatusFile> skip = Admit(limits, bytes, size)) {
      skip->path = std::move(path);
      out.skipped.push_back(*std::move(skip));
      continue;
    }
    bytes += size;
    if (absl::Status s = ReadStatusBlob(repo, entry, std::move(path), out); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Through `fresh` when there is one (NewObjects::Add), else through libgit2.
absl::StatusOr<git_oid> WriteBlob(git_repository* repo, NewObjects* fresh,
                                  const std::string& content) {
  if (fresh != nullptr) return fresh->Add(content, GIT_OBJECT_BLOB);
  git_oid id;
  if (int rc = git_blob_create_from_buffer(&id, repo, content.data(), content.size()); rc < 0) {
    return GitError(rc, "write a blob");
  }
  return id;
}

// The id of `base` with `files` written (or removed) into it.
absl::StatusOr<git_oid> ApplyFiles(git_repository* repo, NewObjects* fresh, git_tree* base,
                                   const std::map<std::string, std::optional<std::string>>& files) {
  std::vector<git_tree_update> updates;
  for (const auto& [path, content] : files) {
    git_tree_update update{};
    update.path = path.c_str();
    if (content.has_value()) {
      absl::StatusOr<git_oid> blob = WriteBlob(repo, fresh, *content);
      if (!blob.ok()) {
        const std::string why(blob.status().message());
        return absl::Status(blob.status().code(), fmt::format("write {}: {}", path, why));
      }
      update.id = *blob;
      update.action = GIT_TREE_UPDATE_UPSERT;
      update.filemode = GIT_FILEMODE_BLOB;
    } else if (HasPath(base, path)) {
      update.action = GIT_TREE_UPDATE_REMOVE;
    } else {
      continue;
    }
    updates.push_back(update);
  }
  git_oid tree_id;
  if (int rc = git_tree_create_updated(&tree_id, repo, base, updates.size(), updates.data());
      rc < 0) {
    return GitError(rc, "build the status tree");
  }
  return tree_id;
}

absl::StatusOr<git_oid> WriteCommit(git_repository* repo, const StatusCommitSpec& spec,
                                    const git_oid& tree_id) {
  git_tree* raw_tree = nullptr;
  if (int rc = git_tree_lookup(&raw_tree, repo, &tree_id); rc < 0) {
    return GitError(rc, "read the status tree");
  }
  TreePtr tree(raw_tree);
  git_signature* raw_sig = nullptr;
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(spec.when.time_since_epoch());
  if (int rc = git_signature_new(&raw_sig, spec.author_name.c_str(), spec.author_email.c_str(),
                                 seconds.count(), 0);
      rc < 0) {
    return GitError(rc, "make the status author");
  }
  SignaturePtr signature(raw_sig);
  CommitPtr parent;
  if (spec.parent.has_value()) {
    git_commit* raw = nullptr;
    if (int rc = git_commit_lookup(&raw, repo, &*spec.parent); rc < 0) {
      return GitError(rc, "read the status branch's tip");
    }
    parent.reset(raw);
  }
  const git_commit* parents[] = {parent.get()};
  git_oid commit_id;
  if (int rc =
          git_commit_create(&commit_id, repo, nullptr, signature.get(), signature.get(), nullptr,
                            spec.message.c_str(), tree.get(), parent ? 1 : 0, parents);
      rc < 0) {
    return GitError(rc, "write the status commit");
  }
  return commit_id;
}

}  // namespace

absl::Status ValidateStatusPath(const std::string& path) {
  const std::vector<std::string_view> parts = core::Split(path, '/');
  bool ordinary = parts.size() >= 2 && parts.front() == core::kStatusDirectory;
  for (std::size_t i = 1; ordinary && i < parts.size(); ++i) ordinary = IsOrdinaryName(parts[i]);
  if (!ordinary) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' is not a file path under status/", path.substr(0, 200)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<git_oid>> CreateStatusCommit(git_repository* repo,
                                                          const StatusCommitSpec& spec,
                                                          NewObjects* fresh) {
  absl::StatusOr<TreePtr> base = BaseTree(repo, spec.parent);
  if (!base.ok()) return base.status();
  absl::StatusOr<git_oid> tree_id = ApplyFiles(repo, fresh, base->get(), spec.files);
  if (!tree_id.ok()) return tree_id.status();
  if (git_oid_equal(&*tree_id, git_tree_id(base->get()))) return std::optional<git_oid>();
  absl::StatusOr<git_oid> commit = WriteCommit(repo, spec, *tree_id);
  if (!commit.ok()) return commit.status();
  return std::optional<git_oid>(*commit);
}

namespace {

constexpr char kOverBudgetPayload[] = "talos-reconciler/status-tree-over-budget";

absl::Status OverBudget(std::string message) {
  absl::Status status = absl::ResourceExhaustedError(fmt::format(
      "{}; the status branch is not used until the extra entries under status/ are removed",
      message));
  status.SetPayload(kOverBudgetPayload, absl::Cord("status/"));
  return status;
}

// The status/ entry of `commit`'s tree; null when there is none, or it is no tree.
absl::StatusOr<TreeEntryPtr> StatusEntry(git_repository* repo, const git_oid& commit) {
  absl::StatusOr<TreePtr> root = BaseTree(repo, commit);
  if (!root.ok()) return root.status();
  const git_tree_entry* status =
      git_tree_entry_byname(root->get(), std::string(core::kStatusDirectory).c_str());
  if (status == nullptr || git_tree_entry_filemode(status) != GIT_FILEMODE_TREE) {
    return TreeEntryPtr();
  }
  git_tree_entry* copy = nullptr;
  if (int rc = git_tree_entry_dup(&copy, status); rc < 0) return GitError(rc, "read status/");
  return TreeEntryPtr(copy);
}

// The status/ tree of `commit` (null when there is none), loaded only when its listing is within
// the limits: sized from its object header first, then counted.
absl::StatusOr<TreePtr> BoundedStatusTree(git_repository* repo, git_odb* odb,
                                          const git_oid& commit, const StatusReadLimits& limits) {
  absl::StatusOr<TreeEntryPtr> status = StatusEntry(repo, commit);
  if (!status.ok()) return status.status();
  if (*status == nullptr) return TreePtr();
  size_t listing = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  if (int rc = git_odb_read_header(&listing, &type, odb, git_tree_entry_id(status->get()));
      rc < 0) {
    return GitError(rc, "read status/");
  }
  if (listing > StatusListingBudget(limits)) {
    return OverBudget(fmt::format("status/'s listing is {} bytes, over its budget of {} bytes",
                                  listing, StatusListingBudget(limits)));
  }
  git_tree* raw = nullptr;
  if (int rc = git_tree_lookup(&raw, repo, git_tree_entry_id(status->get())); rc < 0) {
    return GitError(rc, "read status/");
  }
  TreePtr tree(raw);
  if (const size_t entries = git_tree_entrycount(tree.get()); entries > limits.max_files) {
    return OverBudget(fmt::format("status/ holds {} entries, more than the limit of {} files",
                                  entries, limits.max_files));
  }
  return tree;
}

absl::StatusOr<OdbPtr> OpenOdb(git_repository* repo) {
  git_odb* raw_odb = nullptr;
  if (int rc = git_repository_odb(&raw_odb, repo); rc < 0) {
    return GitError(rc, "open the object database");
  }
  return OdbPtr(raw_odb);
}

}  // namespace

std::uint64_t StatusListingBudget(const StatusReadLimits& limits) {
  return std::uint64_t{limits.max_files} * kStatusListingBytesPerFile;
}

bool IsStatusTreeOverBudget(const absl::Status& status) {
  return status.GetPayload(kOverBudgetPayload).has_value();
}

absl::Status CheckStatusTree(git_repository* repo, const git_oid& commit,
                             const StatusReadLimits& limits) {
  absl::StatusOr<OdbPtr> odb = OpenOdb(repo);
  if (!odb.ok()) return odb.status();
  return BoundedStatusTree(repo, odb->get(), commit, limits).status();
}

absl::StatusOr<StatusFiles> ReadStatusFiles(git_repository* repo, const git_oid& commit,
                                            const StatusReadLimits& limits) {
  StatusFiles files;
  absl::StatusOr<OdbPtr> odb = OpenOdb(repo);
  if (!odb.ok()) return odb.status();
  absl::StatusOr<TreePtr> tree = BoundedStatusTree(repo, odb->get(), commit, limits);
  if (!tree.ok()) return tree.status();
  if (*tree == nullptr) return files;
  if (absl::Status s = CollectFiles(repo, odb->get(), tree->get(), limits, files); !s.ok()) {
    return s;
  }
  return files;
}

absl::StatusOr<std::optional<std::string>> ReadStatusFileAt(git_repository* repo,
                                                            const git_oid& commit,
                                                            const std::string& path,
                                                            std::size_t max_bytes) {
  absl::StatusOr<TreePtr> root = BaseTree(repo, commit);
  if (!root.ok()) return root.status();
  git_tree_entry* raw = nullptr;
  if (git_tree_entry_bypath(&raw, root->get(), path.c_str()) != 0) return std::nullopt;
  TreeEntryPtr entry(raw);
  const git_filemode_t mode = git_tree_entry_filemode(entry.get());
  if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE) return std::nullopt;
  absl::StatusOr<OdbPtr> odb = OpenOdb(repo);
  if (!odb.ok()) return odb.status();
  size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  if (int rc = git_odb_read_header(&size, &type, odb->get(), git_tree_entry_id(entry.get()));
      rc < 0) {
    return GitError(rc, fmt::format("read {}", path));
  }
  if (size > max_bytes) return std::nullopt;
  StatusFiles read;
  if (absl::Status s = ReadStatusBlob(repo, entry.get(), path, read); !s.ok()) return s;
  return std::move(read.files.begin()->second);
}

}  // namespace tr::gitsource
