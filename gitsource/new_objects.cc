#include "gitsource/new_objects.h"

#include <git2/sys/odb_backend.h>

#include <cstring>
#include <memory>

#include "gitsource/libgit2_util.h"

namespace tr::gitsource {
namespace {

// Ahead of the loose objects (priority 1) and the packs (2), so that writes come here.
constexpr int kPriority = 999;

// The backend libgit2 calls; its first member is what libgit2 holds a pointer to.
struct Backend {
  git_odb_backend parent;
  NewObjects* objects;
};

NewObjects& ObjectsOf(git_odb_backend* backend) {
  return *reinterpret_cast<Backend*>(backend)->objects;
}

std::string RawId(const git_oid& id) {
  return std::string(reinterpret_cast<const char*>(id.id), sizeof(id.id));
}

int BackendRead(void** out, std::size_t* size, git_object_t* type, git_odb_backend* backend,
                const git_oid* id) {
  const PackObject* object = ObjectsOf(backend).Find(*id);
  if (object == nullptr) return GIT_ENOTFOUND;
  void* buffer = git_odb_backend_data_alloc(backend, object->data.size());
  if (buffer == nullptr) return GIT_ERROR;
  if (!object->data.empty()) std::memcpy(buffer, object->data.data(), object->data.size());
  *out = buffer;
  *size = object->data.size();
  *type = object->type;
  return 0;
}

int BackendReadHeader(std::size_t* size, git_object_t* type, git_odb_backend* backend,
                      const git_oid* id) {
  const PackObject* object = ObjectsOf(backend).Find(*id);
  if (object == nullptr) return GIT_ENOTFOUND;
  *size = object->data.size();
  *type = object->type;
  return 0;
}

int BackendWrite(git_odb_backend* backend, const git_oid* id, const void* data, std::size_t size,
                 git_object_t type) {
  return ObjectsOf(backend).Write(*id, data, size, type);
}

int BackendExists(git_odb_backend* backend, const git_oid* id) {
  return ObjectsOf(backend).Find(*id) != nullptr ? 1 : 0;
}

}  // namespace

absl::StatusOr<NewObjects*> NewObjects::Attach(git_repository* repo) {
  git_odb* raw_odb = nullptr;
  if (int rc = git_repository_odb(&raw_odb, repo); rc < 0) {
    return GitError(rc, "open the object database");
  }
  OdbPtr odb(raw_odb);
  auto backend = std::make_unique<Backend>();
  if (int rc = git_odb_init_backend(&backend->parent, GIT_ODB_BACKEND_VERSION); rc < 0) {
    return GitError(rc, "set up an in-memory object store");
  }
  std::unique_ptr<NewObjects> objects(new NewObjects(odb.get()));
  backend->objects = objects.get();
  backend->parent.read = BackendRead;
  backend->parent.read_header = BackendReadHeader;
  backend->parent.write = BackendWrite;
  backend->parent.exists = BackendExists;
  backend->parent.free = [](git_odb_backend* b) {
    auto* owned = reinterpret_cast<Backend*>(b);
    delete owned->objects;
    delete owned;
  };
  if (int rc = git_odb_add_backend(odb.get(), &backend->parent, kPriority); rc < 0) {
    return GitError(rc, "add an in-memory object store");
  }
  backend.release();  // the object database frees it
  return objects.release();
}

int NewObjects::Write(const git_oid& id, const void* data, std::size_t size, git_object_t type) {
  if (Find(id) != nullptr) return 0;
  by_id_.emplace(RawId(id), objects_.size());
  objects_.push_back({id, type, std::string(static_cast<const char*>(data), size)});
  return 0;
}

absl::StatusOr<git_oid> NewObjects::Add(std::string_view data, git_object_t type) {
  git_oid id;
  if (int rc = git_odb_hash(&id, data.data(), data.size(), type); rc < 0) {
    return GitError(rc, "hash an object");
  }
  if (git_odb_exists_ext(odb_, &id, GIT_ODB_LOOKUP_NO_REFRESH) != 1) {
    Write(id, data.data(), data.size(), type);
  }
  return id;
}

const PackObject* NewObjects::Find(const git_oid& id) const {
  const auto found = by_id_.find(RawId(id));
  return found == by_id_.end() ? nullptr : &objects_[found->second];
}

absl::Status NewObjects::StoreAsPack(const std::filesystem::path& repo_dir) {
  if (stored_ == objects_.size()) return absl::OkStatus();
  absl::StatusOr<std::string> written =
      WriteObjectPack(repo_dir, std::span<const PackObject>(objects_).subspan(stored_));
  if (!written.ok()) return written.status();
  stored_ = objects_.size();
  return absl::OkStatus();
}

}  // namespace tr::gitsource
