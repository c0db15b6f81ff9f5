#include "gitsource/object_pack.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <vector>

#include "fmt/format.h"
#include "gitsource/libgit2_util.h"

namespace tr::gitsource {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kSha1Bytes = 20;
using Checksum = std::array<unsigned char, kSha1Bytes>;

void AppendBigEndian32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

void AppendBigEndian64(std::string& out, std::uint64_t v) {
  AppendBigEndian32(out, static_cast<std::uint32_t>(v >> 32));
  AppendBigEndian32(out, static_cast<std::uint32_t>(v));
}

absl::StatusOr<Checksum> Sha1(const std::string& bytes) {
  Checksum sum;
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), sum.data(), &length, EVP_sha1(), nullptr) != 1 ||
      length != kSha1Bytes) {
    return absl::InternalError("SHA-1 of a pack failed");
  }
  return sum;
}

// An entry's header: the type in bits 4-6 of the first byte, then the size, four bits in the
// first byte and seven in each next, low bits first; the top bit says another byte follows.
void AppendEntryHeader(std::string& out, git_object_t type, std::size_t size) {
  unsigned char byte = static_cast<unsigned char>((static_cast<unsigned>(type) << 4) | (size & 15));
  size >>= 4;
  while (size != 0) {
    out.push_back(static_cast<char>(byte | 0x80));
    byte = static_cast<unsigned char>(size & 0x7f);
    size >>= 7;
  }
  out.push_back(static_cast<char>(byte));
}

absl::Status AppendDeflated(std::string& out, const std::string& data) {
  // Fast compression: the compaction may rewrite these entries, and a status is small.
  uLongf length = compressBound(static_cast<uLong>(data.size()));
  const std::size_t at = out.size();
  out.resize(at + length);
  if (compress2(reinterpret_cast<Bytef*>(out.data() + at), &length,
                reinterpret_cast<const Bytef*>(data.data()), static_cast<uLong>(data.size()),
                Z_BEST_SPEED) != Z_OK) {
    return absl::InternalError("deflating an object for a pack failed");
  }
  out.resize(at + length);
  return absl::OkStatus();
}

using IndexEntry = PackIndexEntry;

// Index version 2: magic and version, 256 cumulative counts by the id's first byte, the ids
// sorted, their entries' CRC-32s, their offsets (31 bits, or the index into a table of 64-bit
// offsets with the top bit set), that table, the pack's checksum and the index's own.
absl::StatusOr<std::string> IndexBytes(std::vector<IndexEntry> entries, const Checksum& pack_sum) {
  std::sort(entries.begin(), entries.end(),
            [](const IndexEntry& a, const IndexEntry& b) { return git_oid_cmp(&a.id, &b.id) < 0; });
  std::string idx = {'\xff', 't', 'O', 'c', 0, 0, 0, 2};
  std::array<std::uint32_t, 256> fanout{};
  for (const IndexEntry& entry : entries) ++fanout[entry.id.id[0]];
  std::partial_sum(fanout.begin(), fanout.end(), fanout.begin());
  for (std::uint32_t count : fanout) AppendBigEndian32(idx, count);
  for (const IndexEntry& e : entries)
    idx.append(reinterpret_cast<const char*>(e.id.id), kSha1Bytes);
  for (const IndexEntry& e : entries) AppendBigEndian32(idx, e.crc);
  std::vector<std::uint64_t> large;
  for (const IndexEntry& e : entries) {
    if (e.offset < 0x80000000u) {
      AppendBigEndian32(idx, static_cast<std::uint32_t>(e.offset));
    } else {
      AppendBigEndian32(idx, 0x80000000u | static_cast<std::uint32_t>(large.size()));
      large.push_back(e.offset);
    }
  }
  for (std::uint64_t offset : large) AppendBigEndian64(idx, offset);
  idx.append(reinterpret_cast<const char*>(pack_sum.data()), kSha1Bytes);
  absl::StatusOr<Checksum> idx_sum = Sha1(idx);
  if (!idx_sum.ok()) return idx_sum.status();
  idx.append(reinterpret_cast<const char*>(idx_sum->data()), kSha1Bytes);
  return idx;
}

// A file written under a temporary name in `dir` and renamed into place by Finish; removed
// when it is not finished.
class NewFile {
 public:
  explicit NewFile(const fs::path& dir) : dir_(dir), temp_((dir / "tmp_pack_XXXXXX").string()) {
    fd_ = mkstemp(temp_.data());
    if (fd_ < 0) error_ = std::strerror(errno);
  }
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;
  ~NewFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!finished_) {
      std::error_code ignored;
      fs::remove(temp_, ignored);
    }
  }

  void Write(std::string_view bytes) {
    while (error_.empty() && !bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) error_ = n < 0 ? std::strerror(errno) : "nothing written";
      if (n > 0) bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  absl::Status Finish(const std::string& name) {
    // Packs are read-only, as git and libgit2 leave them.
    if (error_.empty() && (fchmod(fd_, 0444) != 0 || ::close(std::exchange(fd_, -1)) != 0 ||
                           std::rename(temp_.c_str(), (dir_ / name).c_str()) != 0)) {
      error_ = std::strerror(errno);
    }
    if (!error_.empty()) {
      return absl::InternalError(fmt::format("write {}: {}", (dir_ / name).string(), error_));
    }
    finished_ = true;
    return absl::OkStatus();
  }

 private:
  const fs::path dir_;
  std::string temp_;
  int fd_ = -1;
  std::string error_;
  bool finished_ = false;
};

// An object as the object database has it (a delta resolved, a loose object inflated).
absl::StatusOr<PackObject> ReadObject(git_odb* odb, const git_oid& id) {
  git_odb_object* raw = nullptr;
  if (int rc = git_odb_read(&raw, odb, &id); rc < 0) {
    return GitError(rc, fmt::format("read {} to pack it", OidHex(id)));
  }
  std::unique_ptr<git_odb_object, GitFree<git_odb_object, git_odb_object_free>> object(raw);
  return PackObject{
      id, git_odb_object_type(raw),
      std::string(static_cast<const char*>(git_odb_object_data(raw)), git_odb_object_size(raw))};
}

absl::Status WriteFileAs(const fs::path& dir, const std::string& bytes, const std::string& name) {
  NewFile file(dir);
  file.Write(bytes);
  return file.Finish(name);
}

}  // namespace

absl::StatusOr<std::string> WriteObjectPack(const fs::path& repo,
                                            std::span<const PackObject> objects) {
  std::string pack = {'P', 'A', 'C', 'K', 0, 0, 0, 2};
  AppendBigEndian32(pack, static_cast<std::uint32_t>(objects.size()));
  std::vector<IndexEntry> entries;
  entries.reserve(objects.size());
  for (const PackObject& object : objects) {
    IndexEntry entry{object.id, 0, pack.size()};
    AppendEntryHeader(pack, object.type, object.data.size());
    if (absl::Status s = AppendDeflated(pack, object.data); !s.ok()) return s;
    entry.crc = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(pack.data() + entry.offset),
              static_cast<uInt>(pack.size() - entry.offset)));
    entries.push_back(entry);
  }
  absl::StatusOr<Checksum> pack_sum = Sha1(pack);
  if (!pack_sum.ok()) return pack_sum.status();
  pack.append(reinterpret_cast<const char*>(pack_sum->data()), kSha1Bytes);
  absl::StatusOr<std::string> idx = IndexBytes(std::move(entries), *pack_sum);
  if (!idx.ok()) return idx.status();

  git_oid sum_id;
  git_oid_fromraw(&sum_id, pack_sum->data());
  const std::string name = "pack-" + OidHex(sum_id);
  const fs::path dir = repo / "objects/pack";
  if (absl::Status s = WriteFileAs(dir, pack, name + ".pack"); !s.ok()) return s;
  if (absl::Status s = WriteFileAs(dir, *idx, name + ".idx"); !s.ok()) return s;
  return OidHex(sum_id);
}

absl::StatusOr<std::string> CopyIntoOnePack(const fs::path& repo, git_odb* odb,
                                            const std::vector<PackFile>& packs,
                                            const std::vector<LooseObject>& loose) {
  std::unordered_set<std::string> ids;
  const auto seen = [&](const git_oid& id) {
    return ids.contains(std::string(reinterpret_cast<const char*>(id.id), kSha1Bytes));
  };
  const auto see = [&](const git_oid& id) {
    ids.insert(std::string(reinterpret_cast<const char*>(id.id), kSha1Bytes));
  };
  // The packs to copy whole, with their indexes and sizes; the ids of the objects to pack one
  // by one (of a pack that shares an object with one copied, and the loose ones).
  std::vector<const PackFile*> copied;
  std::vector<std::vector<IndexEntry>> indexes;
  std::vector<std::uintmax_t> sizes;
  std::vector<git_oid> singles;
  std::vector<const PackFile*> largest_first;
  for (const PackFile& pack : packs) largest_first.push_back(&pack);
  std::sort(largest_first.begin(), largest_first.end(),
            [](const PackFile* a, const PackFile* b) { return a->objects > b->objects; });
  for (const PackFile* pack : largest_first) {
    absl::StatusOr<std::vector<IndexEntry>> entries =
        PackIndexEntries(fs::path(pack->pack).replace_extension(".idx"));
    if (!entries.ok()) return entries.status();
    if (std::any_of(entries->begin(), entries->end(),
                    [&](const IndexEntry& e) { return seen(e.id); })) {
      for (const IndexEntry& e : *entries) {
        if (!seen(e.id)) singles.push_back(e.id);
        see(e.id);
      }
      continue;
    }
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(pack->pack, ec);
    if (ec || size < 12 + kSha1Bytes) {
      return absl::InternalError(fmt::format("{} is no pack", pack->pack.string()));
    }
    for (const IndexEntry& e : *entries) see(e.id);
    copied.push_back(pack);
    sizes.push_back(size);
    indexes.push_back(*std::move(entries));
  }
  for (const LooseObject& object : loose) {
    if (!seen(object.id)) singles.push_back(object.id);
    see(object.id);
  }
  std::size_t count = singles.size();
  for (const auto& index : indexes) count += index.size();

  const fs::path dir = repo / "objects/pack";
  NewFile file(dir);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> sha(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (sha == nullptr || EVP_DigestInit_ex(sha.get(), EVP_sha1(), nullptr) != 1) {
    return absl::InternalError("SHA-1 of a pack failed");
  }
  std::uint64_t offset = 0;
  const auto write = [&](std::string_view bytes) {
    EVP_DigestUpdate(sha.get(), bytes.data(), bytes.size());
    file.Write(bytes);
    offset += bytes.size();
  };
  std::string header = {'P', 'A', 'C', 'K', 0, 0, 0, 2};
  AppendBigEndian32(header, static_cast<std::uint32_t>(count));
  write(header);
  std::vector<IndexEntry> entries;
  entries.reserve(count);
  // Each pack's entries are copied whole and in order, so a delta's distance to its base in
  // the same pack (an offset delta) still holds; only where each entry starts moves.
  for (std::size_t p = 0; p < copied.size(); ++p) {
    const std::uint64_t shift = offset - 12;
    for (IndexEntry entry : indexes[p]) {
      entry.offset += shift;
      entries.push_back(entry);
    }
    std::string expected_head = header.substr(0, 8);
    AppendBigEndian32(expected_head, static_cast<std::uint32_t>(indexes[p].size()));
    std::ifstream in(copied[p]->pack, std::ios::binary);
    std::string head(expected_head.size(), '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    if (!in || head != expected_head) {
      return absl::InternalError(
          fmt::format("{} does not match its index", copied[p]->pack.string()));
    }
    std::uintmax_t left = sizes[p] - 12 - kSha1Bytes;
    std::string chunk(std::min<std::uintmax_t>(left, 1 << 20), '\0');
    while (left > 0) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uintmax_t>(left, chunk.size()));
      if (!in.read(chunk.data(), static_cast<std::streamsize>(n))) {
        return absl::InternalError(fmt::format("read {}", copied[p]->pack.string()));
      }
      write(std::string_view(chunk.data(), n));
      left -= n;
    }
  }
  for (const git_oid& id : singles) {
    absl::StatusOr<PackObject> object = ReadObject(odb, id);
    if (!object.ok()) return object.status();
    std::string entry;
    AppendEntryHeader(entry, object->type, object->data.size());
    if (absl::Status s = AppendDeflated(entry, object->data); !s.ok()) return s;
    entries.push_back(
        {id,
         static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(entry.data()),
                                          static_cast<uInt>(entry.size()))),
         offset});
    write(entry);
  }
  Checksum pack_sum;
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(sha.get(), pack_sum.data(), &length) != 1 || length != kSha1Bytes) {
    return absl::InternalError("SHA-1 of a pack failed");
  }
  file.Write(std::string_view(reinterpret_cast<const char*>(pack_sum.data()), kSha1Bytes));
  absl::StatusOr<std::string> idx = IndexBytes(std::move(entries), pack_sum);
  if (!idx.ok()) return idx.status();
  git_oid sum_id;
  git_oid_fromraw(&sum_id, pack_sum.data());
  const std::string name = "pack-" + OidHex(sum_id);
  if (absl::Status s = file.Finish(name + ".pack"); !s.ok()) return s;
  if (absl::Status s = WriteFileAs(dir, *idx, name + ".idx"); !s.ok()) return s;
  return OidHex(sum_id);
}

}  // namespace tr::gitsource
