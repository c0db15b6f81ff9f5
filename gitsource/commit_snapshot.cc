#include "gitsource/commit_snapshot.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

#include "fmt/format.h"
#include "gitsource/libgit2_util.h"

namespace tr::gitsource {
namespace {

constexpr std::size_t kAllowedSignersLimit = 1 << 20;

bool IsRegularBlob(const git_tree_entry* entry) {
  const git_filemode_t mode = git_tree_entry_filemode(entry);
  return mode == GIT_FILEMODE_BLOB || mode == GIT_FILEMODE_BLOB_EXECUTABLE;
}

bool IsProfileName(std::string_view name) { return name.size() > 5 && name.ends_with(".yaml"); }

// A profile file of the tree, sized from its object header before anything is read.
struct FoundBlob {
  std::string path;
  git_oid id;
  std::size_t size = 0;
};

// Sizes come from object headers; a blob named by many entries is looked up once.
class BlobSizer {
 public:
  explicit BlobSizer(git_odb* odb) : odb_(odb) {}
  absl::StatusOr<std::size_t> Size(const git_oid& id, std::string_view what) {
    const std::string key(reinterpret_cast<const char*>(id.id), GIT_OID_RAWSZ);
    if (auto known = sizes_.find(key); known != sizes_.end()) return known->second;
    size_t size = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    if (int rc = git_odb_read_header(&size, &type, odb_, &id); rc < 0) {
      return GitError(rc, fmt::format("read {}", what));
    }
    sizes_.emplace(key, size);
    return size;
  }

 private:
  git_odb* odb_;
  std::map<std::string, std::size_t> sizes_;
};

// Sizes `id` and adds it as `path`; only a file that will be read counts toward `bytes`.
absl::Status AddFound(BlobSizer& sizer, std::string path, const git_oid& id,
                      const SnapshotLimits& limits, std::vector<FoundBlob>& found,
                      std::uint64_t& bytes) {
  absl::StatusOr<std::size_t> size = sizer.Size(id, path);
  if (!size.ok()) return size.status();
  if (*size <= limits.max_file_bytes) bytes += *size;
  found.push_back({std::move(path), id, *size});
  return absl::OkStatus();
}

absl::StatusOr<core::SourceFile> ReadBlobFile(git_repository* repo, const FoundBlob& found,
                                              const SnapshotLimits& limits) {
  core::SourceFile file;
  file.path = found.path;
  if (found.size > limits.max_file_bytes) {
    file.oversized = true;
    return file;
  }
  git_blob* raw = nullptr;
  if (int rc = git_blob_lookup(&raw, repo, &found.id); rc < 0) {
    return GitError(rc, fmt::format("read {}", file.path));
  }
  BlobPtr blob(raw);
  file.content.assign(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                      static_cast<std::size_t>(git_blob_rawsize(blob.get())));
  return file;
}

// The regular `*.yaml` blobs directly in `dir` (clusters/ or schematics/), sized, counted
// against the file limit as they are listed. The tree object's own size counts toward
// `bytes`, checked before the tree is loaded.
absl::Status ListYamlBlobs(git_repository* repo, BlobSizer& sizer, const git_tree_entry* dir,
                           const SnapshotLimits& limits, std::vector<FoundBlob>& found,
                           std::uint64_t& bytes) {
  const std::string name = git_tree_entry_name(dir);
  absl::StatusOr<std::size_t> tree_size = sizer.Size(*git_tree_entry_id(dir), name + "/");
  if (!tree_size.ok()) return tree_size.status();
  bytes += *tree_size;
  if (absl::Status s = CheckSnapshotBudget(limits, found.size(), bytes); !s.ok()) return s;
  git_tree* raw = nullptr;
  if (int rc = git_tree_lookup(&raw, repo, git_tree_entry_id(dir)); rc < 0) {
    return GitError(rc, fmt::format("read {}/", name));
  }
  TreePtr tree(raw);
  const size_t count = git_tree_entrycount(tree.get());
  for (size_t i = 0; i < count; ++i) {
    const git_tree_entry* entry = git_tree_entry_byindex(tree.get(), i);
    if (!IsRegularBlob(entry) || !IsProfileName(git_tree_entry_name(entry))) continue;
    if (absl::Status s = CheckSnapshotBudget(limits, found.size() + 1, 0); !s.ok()) return s;
    if (absl::Status s = AddFound(sizer, fmt::format("{}/{}", name, git_tree_entry_name(entry)),
                                  *git_tree_entry_id(entry), limits, found, bytes);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// reconciler.yaml, clusters/*.yaml and schematics/*.yaml of `tree`, sized;
// FailedPrecondition past a limit, before any blob is read.
absl::StatusOr<std::vector<FoundBlob>> FindProfileBlobs(git_repository* repo, git_odb* odb,
                                                        git_tree* tree,
                                                        const SnapshotLimits& limits) {
  BlobSizer sizer(odb);
  std::vector<FoundBlob> found;
  std::uint64_t bytes = 0;
  if (const git_tree_entry* defaults = git_tree_entry_byname(tree, "reconciler.yaml");
      defaults != nullptr && IsRegularBlob(defaults)) {
    if (absl::Status s = AddFound(sizer, "reconciler.yaml", *git_tree_entry_id(defaults), limits,
                                  found, bytes);
        !s.ok()) {
      return s;
    }
  }
  for (const char* name : {"clusters", "schematics"}) {
    if (const git_tree_entry* dir = git_tree_entry_byname(tree, name);
        dir != nullptr && git_tree_entry_filemode(dir) == GIT_FILEMODE_TREE) {
      if (absl::Status s = ListYamlBlobs(repo, sizer, dir, limits, found, bytes); !s.ok()) {
        return s;
      }
    }
  }
  if (absl::Status s = CheckSnapshotBudget(limits, found.size(), bytes); !s.ok()) return s;
  return found;
}

absl::StatusOr<std::string> ReadAllowedSigners(const std::filesystem::path& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  std::string text(ec ? 0 : static_cast<std::size_t>(size), '\0');
  std::ifstream in(path, std::ios::binary);
  if (ec || size > kAllowedSignersLimit ||
      !in.read(text.data(), static_cast<std::streamsize>(size))) {
    return absl::FailedPreconditionError(
        fmt::format("cannot read the allowed signers file {}", path.string()));
  }
  return text;
}

}  // namespace

absl::StatusOr<ProfileSnapshot> ReadCommitSnapshot(git_repository* repo, const git_oid& id,
                                                   const SnapshotLimits& limits) {
  absl::StatusOr<CommitPtr> commit = LookupCommit(repo, id);
  if (!commit.ok()) return commit.status();
  ProfileSnapshot snapshot;
  snapshot.origin.commit = OidHex(id);
  const git_signature* author = git_commit_author(commit->get());
  snapshot.origin.author = fmt::format("{} <{}>", author->name, author->email);
  const char* message = git_commit_message(commit->get());
  snapshot.origin.message = message != nullptr ? message : "";
  git_tree* raw_tree = nullptr;
  if (int rc = git_commit_tree(&raw_tree, commit->get()); rc < 0) {
    return GitError(rc, fmt::format("read the tree of {}", snapshot.origin.commit));
  }
  TreePtr tree(raw_tree);
  git_odb* raw_odb = nullptr;
  if (int rc = git_repository_odb(&raw_odb, repo); rc < 0) {
    return GitError(rc, "open the object database");
  }
  OdbPtr odb(raw_odb);
  absl::StatusOr<std::vector<FoundBlob>> found =
      FindProfileBlobs(repo, odb.get(), tree.get(), limits);
  if (!found.ok()) {
    return absl::Status(found.status().code(), fmt::format("commit {}: {}",
                                                           snapshot.origin.commit.substr(0, 12),
                                                           std::string(found.status().message())));
  }
  for (const FoundBlob& blob : *found) {
    absl::StatusOr<core::SourceFile> file = ReadBlobFile(repo, blob, limits);
    if (!file.ok()) return file.status();
    snapshot.files.push_back(*std::move(file));
  }
  std::sort(snapshot.files.begin(), snapshot.files.end(),
            [](const core::SourceFile& a, const core::SourceFile& b) { return a.path < b.path; });
  return snapshot;
}

absl::StatusOr<SignatureVerdict> VerifyCommitSignature(git_repository* repo, const git_oid& id,
                                                       const SignatureVerification& config) {
  const std::string short_id = OidHex(id).substr(0, 12);
  absl::StatusOr<std::string> allowed = ReadAllowedSigners(config.allowed_signers_file);
  if (!allowed.ok()) return allowed.status();
  absl::StatusOr<CommitPtr> commit = LookupCommit(repo, id);
  if (!commit.ok()) return commit.status();
  GitBuffer signature, payload;
  git_oid commit_id = id;
  const int rc =
      git_commit_extract_signature(&signature.buf, &payload.buf, repo, &commit_id, nullptr);
  if (rc == GIT_ENOTFOUND) {
    return absl::FailedPreconditionError(fmt::format("commit {} is not signed", short_id));
  }
  if (rc < 0) return GitError(rc, fmt::format("read the signature of commit {}", short_id));
  const std::string_view armored = signature.view();
  if (armored.find("-----BEGIN SSH SIGNATURE-----") == std::string_view::npos) {
    return absl::FailedPreconditionError(fmt::format(
        "commit {} carries an OpenPGP or X.509 signature; only SSH signatures are verified",
        short_id));
  }
  const git_time_t when = git_commit_committer(commit->get())->when.time;
  absl::StatusOr<SignatureVerdict> verdict = VerifyGitSignature(
      armored, payload.view(), *allowed, std::chrono::system_clock::from_time_t(when));
  if (!verdict.ok()) {
    return absl::Status(
        verdict.status().code(),
        fmt::format("commit {}: {}", short_id, std::string(verdict.status().message())));
  }
  return verdict;
}

}  // namespace tr::gitsource
