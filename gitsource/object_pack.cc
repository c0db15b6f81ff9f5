#include "gitsource/object_pack.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>
#include <system_error>

#include "fmt/format.h"
#include "gitsource/libgit2_util.h"

namespace tr::gitsource {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kSha1Bytes = 20;
using Checksum = std::array<unsigned char, kSha1Bytes>;

void AppendBigEndian32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
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

// One object of a pack, as its index lists it.
struct IndexEntry {
  git_oid id;
  std::uint32_t crc = 0;  // of the entry's bytes in the pack
  std::uint64_t offset = 0;
};

// Index version 2: magic and version, 256 cumulative counts by the id's first byte, the ids
// sorted, their entries' CRC-32s, their offsets (31 bits, or the index into a table of 64-bit
// offsets with the top bit set), that table, the pack's checksum and the index's own.
absl::StatusOr<std::string> IndexBytes(std::vector<IndexEntry> entries, const Checksum& pack_sum) {
  std::sort(entries.begin(), entries.end(), [](const IndexEntry& a, const IndexEntry& b) {
    return git_oid_cmp(&a.id, &b.id) < 0;
  });
  std::string idx = {'\xff', 't', 'O', 'c', 0, 0, 0, 2};
  std::array<std::uint32_t, 256> fanout{};
  for (const IndexEntry& entry : entries) ++fanout[entry.id.id[0]];
  std::partial_sum(fanout.begin(), fanout.end(), fanout.begin());
  for (std::uint32_t count : fanout) AppendBigEndian32(idx, count);
  for (const IndexEntry& e : entries) idx.append(reinterpret_cast<const char*>(e.id.id), kSha1Bytes);
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

// Writes `bytes` to a new temporary file in `dir`, then renames it to `name`.
absl::Status WriteFileAs(const fs::path& dir, const std::string& bytes, const fs::path& name) {
  std::string temp = (dir / "tmp_pack_XXXXXX").string();
  const int fd = mkstemp(temp.data());
  if (fd < 0) {
    return absl::InternalError(fmt::format("create a pack in {}: {}", dir.string(),
                                           std::strerror(errno)));
  }
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  // Packs are read-only, as git and libgit2 leave them.
  const bool ok = written == bytes.size() && fchmod(fd, 0444) == 0 && ::close(fd) == 0;
  if (!ok || std::rename(temp.c_str(), (dir / name).c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::error_code ignored;
    fs::remove(temp, ignored);
    return absl::InternalError(fmt::format("write {}: {}", (dir / name).string(), why));
  }
  return absl::OkStatus();
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

}  // namespace tr::gitsource
