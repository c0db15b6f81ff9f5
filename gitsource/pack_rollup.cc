#include "gitsource/pack_rollup.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <numeric>
#include <optional>
#include <string>
#include <system_error>

#include "fmt/format.h"

namespace tr::gitsource {
namespace fs = std::filesystem;
namespace {

// Pack index version 2: a magic number, the version, 256 cumulative counts by first byte
// (the last is the object count), then the sorted object ids.
constexpr std::array<unsigned char, 8> kIndexV2Header = {0xff, 't', 'O', 'c', 0, 0, 0, 2};
constexpr std::size_t kFanoutEnd = 8 + 256 * 4;
constexpr std::size_t kIdBytes = 20;
// After the ids: a CRC and an offset per object, then the pack's and the index's checksums.
constexpr std::size_t kBytesPerObject = kIdBytes + 4 + 4;
constexpr std::size_t kChecksums = 2 * kIdBytes;

std::uint32_t BigEndian32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// The object count an index claims, from its first kFanoutEnd bytes; nullopt if not version 2.
std::optional<std::uint32_t> IndexObjectCount(const std::string& head) {
  if (head.size() < kFanoutEnd ||
      !std::equal(kIndexV2Header.begin(), kIndexV2Header.end(), head.begin(),
                  [](unsigned char a, char b) { return a == static_cast<unsigned char>(b); })) {
    return std::nullopt;
  }
  return BigEndian32(reinterpret_cast<const unsigned char*>(head.data()) + kFanoutEnd - 4);
}

std::string ReadPrefix(const fs::path& path, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string data(bytes, '\0');
  in.read(data.data(), static_cast<std::streamsize>(bytes));
  data.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
  return data;
}

bool IsHex(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

}  // namespace

std::vector<PackFile> ListPacks(const fs::path& repo) {
  std::vector<PackFile> packs;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(repo / "objects/pack", ec)) {
    if (entry.path().extension() != ".pack") continue;
    const std::optional<std::uint32_t> count =
        IndexObjectCount(ReadPrefix(fs::path(entry.path()).replace_extension(".idx"), kFanoutEnd));
    if (count) packs.push_back({entry.path(), *count});  // one being written has no index yet
  }
  return packs;
}

std::vector<LooseObject> ListLooseObjects(const fs::path& repo) {
  std::vector<LooseObject> loose;
  std::error_code ec;
  for (const fs::directory_entry& dir : fs::directory_iterator(repo / "objects", ec)) {
    const std::string prefix = dir.path().filename().string();
    if (prefix.size() != 2 || !IsHex(prefix) || !dir.is_directory(ec)) continue;
    for (const fs::directory_entry& file : fs::directory_iterator(dir.path(), ec)) {
      const std::string rest = file.path().filename().string();
      LooseObject object{file.path(), {}};
      if (rest.size() != 2 * kIdBytes - 2 || !IsHex(rest) ||
          git_oid_fromstr(&object.id, (prefix + rest).c_str()) != 0) {
        continue;  // a temporary file of a write in progress
      }
      loose.push_back(std::move(object));
    }
  }
  return loose;
}

absl::StatusOr<std::vector<PackIndexEntry>> PackIndexEntries(const fs::path& idx) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(idx, ec);
  if (ec) return absl::InvalidArgumentError(fmt::format("read {}: {}", idx.string(), ec.message()));
  const std::string data = ReadPrefix(idx, static_cast<std::size_t>(size));
  const std::optional<std::uint32_t> count = IndexObjectCount(data);
  if (!count) return absl::InvalidArgumentError(fmt::format("{} is no pack index v2", idx.string()));
  if (data.size() < kFanoutEnd + std::size_t{*count} * kBytesPerObject + kChecksums) {
    return absl::InvalidArgumentError(
        fmt::format("{} is shorter than its {} objects need", idx.string(), *count));
  }
  // The ids, then a CRC each, then an offset each: 31 bits, or with the top bit set the
  // index into a table of 64-bit offsets that follows.
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const std::size_t crcs = kFanoutEnd + std::size_t{*count} * kIdBytes;
  const std::size_t offsets = crcs + std::size_t{*count} * 4;
  const std::size_t large = offsets + std::size_t{*count} * 4;
  std::vector<PackIndexEntry> entries(*count);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    git_oid_fromraw(&entries[i].id, bytes + kFanoutEnd + i * kIdBytes);
    entries[i].crc = BigEndian32(bytes + crcs + i * 4);
    const std::uint32_t offset = BigEndian32(bytes + offsets + i * 4);
    if ((offset & 0x80000000u) == 0) {
      entries[i].offset = offset;
      continue;
    }
    const std::size_t at = large + std::size_t{offset & 0x7fffffffu} * 8;
    if (data.size() < at + 8 + kChecksums) {
      return absl::InvalidArgumentError(fmt::format("{} has a bad large offset", idx.string()));
    }
    entries[i].offset =
        (std::uint64_t{BigEndian32(bytes + at)} << 32) | BigEndian32(bytes + at + 4);
  }
  return entries;
}

absl::StatusOr<std::vector<git_oid>> PackIndexIds(const fs::path& idx) {
  absl::StatusOr<std::vector<PackIndexEntry>> entries = PackIndexEntries(idx);
  if (!entries.ok()) return entries.status();
  std::vector<git_oid> ids;
  ids.reserve(entries->size());
  for (const PackIndexEntry& entry : *entries) ids.push_back(entry.id);
  return ids;
}

std::vector<PackFile> PacksToRollUp(std::vector<PackFile> packs, std::size_t loose) {
  std::sort(packs.begin(), packs.end(),
            [](const PackFile& a, const PackFile& b) { return a.objects > b.objects; });
  std::uint64_t smaller = std::accumulate(
      packs.begin(), packs.end(), std::uint64_t{loose},
      [](std::uint64_t sum, const PackFile& p) { return sum + p.objects; });
  for (std::size_t i = 0; i < packs.size(); ++i) {
    smaller -= packs[i].objects;
    if (packs[i].objects < 2 * smaller) return {packs.begin() + static_cast<long>(i), packs.end()};
  }
  return {};
}

bool WholeRewriteDue(const std::vector<PackFile>& packs, std::size_t loose, std::size_t growth) {
  std::uint64_t total = loose;
  std::uint64_t largest = 0;
  for (const PackFile& pack : packs) {
    total += pack.objects;
    largest = std::max<std::uint64_t>(largest, pack.objects);
  }
  return total >= growth * largest;
}

}  // namespace tr::gitsource
