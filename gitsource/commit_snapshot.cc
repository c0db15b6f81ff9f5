#include "gitsource/commit_snapshot.h"

#include <algorithm>
#include <fstream>

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

absl::StatusOr<core::SourceFile> ReadBlobFile(git_repository* repo, git_odb* odb,
                                              const git_tree_entry* entry, std::string path,
                                              const SnapshotLimits& limits) {
  core::SourceFile file;
  file.path = std::move(path);
  const git_oid* id = git_tree_entry_id(entry);
  size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  if (int rc = git_odb_read_header(&size, &type, odb, id); rc < 0) {
    return GitError(rc, fmt::format("read {}", file.path));
  }
  if (size > limits.max_file_bytes) {
    file.oversized = true;
    return file;
  }
  git_blob* raw = nullptr;
  if (int rc = git_blob_lookup(&raw, repo, id); rc < 0) {
    return GitError(rc, fmt::format("read {}", file.path));
  }
  BlobPtr blob(raw);
  file.content.assign(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                      static_cast<std::size_t>(git_blob_rawsize(blob.get())));
  return file;
}

absl::Status ReadClusters(git_repository* repo, git_odb* odb, const git_tree_entry* clusters,
                          const SnapshotLimits& limits, ProfileSnapshot& snapshot) {
  git_tree* raw = nullptr;
  if (int rc = git_tree_lookup(&raw, repo, git_tree_entry_id(clusters)); rc < 0) {
    return GitError(rc, "read clusters/");
  }
  TreePtr tree(raw);
  const size_t count = git_tree_entrycount(tree.get());
  std::size_t profiles = 0;
  for (size_t i = 0; i < count; ++i) {
    const git_tree_entry* entry = git_tree_entry_byindex(tree.get(), i);
    if (!IsRegularBlob(entry) || !IsProfileName(git_tree_entry_name(entry))) continue;
    if (++profiles > limits.max_files) {
      return absl::FailedPreconditionError(
          fmt::format("more than {} profile files in clusters/", limits.max_files));
    }
  }
  for (size_t i = 0; i < count; ++i) {
    const git_tree_entry* entry = git_tree_entry_byindex(tree.get(), i);
    if (!IsRegularBlob(entry) || !IsProfileName(git_tree_entry_name(entry))) continue;
    absl::StatusOr<core::SourceFile> file = ReadBlobFile(
        repo, odb, entry, fmt::format("clusters/{}", git_tree_entry_name(entry)), limits);
    if (!file.ok()) return file.status();
    snapshot.files.push_back(*std::move(file));
  }
  return absl::OkStatus();
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

absl::StatusOr<CommitPtr> LookupCommit(git_repository* repo, const git_oid& id) {
  git_commit* raw = nullptr;
  if (int rc = git_commit_lookup(&raw, repo, &id); rc < 0) {
    return GitError(rc, fmt::format("find commit {}", OidHex(id)));
  }
  return CommitPtr(raw);
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
  if (const git_tree_entry* defaults = git_tree_entry_byname(tree.get(), "reconciler.yaml");
      defaults != nullptr && IsRegularBlob(defaults)) {
    absl::StatusOr<core::SourceFile> file =
        ReadBlobFile(repo, odb.get(), defaults, "reconciler.yaml", limits);
    if (!file.ok()) return file.status();
    snapshot.files.push_back(*std::move(file));
  }
  if (const git_tree_entry* clusters = git_tree_entry_byname(tree.get(), "clusters");
      clusters != nullptr && git_tree_entry_filemode(clusters) == GIT_FILEMODE_TREE) {
    if (absl::Status s = ReadClusters(repo, odb.get(), clusters, limits, snapshot); !s.ok()) {
      return s;
    }
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
