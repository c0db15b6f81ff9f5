#include "reconciler/clients/talos/tar_gz.h"

#include <zlib.h>

#include <cstring>

#include "fmt/format.h"

namespace tr::reconciler::talos {
namespace {

constexpr size_t kBlock = 512;

// A NUL-terminated (or full-width) field of a tar header.
std::string_view Field(std::string_view header, size_t offset, size_t width) {
  std::string_view field = header.substr(offset, width);
  const size_t nul = field.find('\0');
  return nul == std::string_view::npos ? field : field.substr(0, nul);
}

// Octal numeric field (sizes); GNU base-256 sizes are rejected as too large for us anyway.
absl::StatusOr<uint64_t> Octal(std::string_view field) {
  uint64_t value = 0;
  bool any = false;
  for (char c : field) {
    if (c == ' ') {
      if (any) break;
      continue;
    }
    if (c < '0' || c > '7') return absl::InvalidArgumentError("tar: bad numeric field");
    value = value * 8 + static_cast<uint64_t>(c - '0');
    any = true;
    if (value > kMaxTarGzBytes) return absl::InvalidArgumentError("tar: entry too large");
  }
  return value;
}

std::string_view StripDotSlash(std::string_view path) {
  while (path.size() >= 2 && path.substr(0, 2) == "./") path.remove_prefix(2);
  return path;
}

// The "path" record of a PAX extended header body ("<len> path=<value>\n" records).
std::string PaxPath(std::string_view body) {
  while (!body.empty()) {
    const size_t space = body.find(' ');
    if (space == std::string_view::npos) break;
    size_t length = 0;
    for (char c : body.substr(0, space)) {
      if (c < '0' || c > '9') return {};
      length = length * 10 + static_cast<size_t>(c - '0');
    }
    if (length <= space + 1 || length > body.size()) return {};
    std::string_view record = body.substr(space + 1, length - space - 2);  // drop '\n'
    if (record.substr(0, 5) == "path=") return std::string(record.substr(5));
    body.remove_prefix(length);
  }
  return {};
}

}  // namespace

absl::StatusOr<std::string> Gunzip(std::string_view gzip, size_t max_bytes) {
  z_stream stream;
  std::memset(&stream, 0, sizeof(stream));
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return absl::InternalError("zlib init failed");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gzip.data()));
  stream.avail_in = static_cast<uInt>(gzip.size());
  std::string out;
  char buffer[16384];
  int result = Z_OK;
  while (result != Z_STREAM_END) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    result = inflate(&stream, Z_NO_FLUSH);
    if (result != Z_OK && result != Z_STREAM_END) {
      inflateEnd(&stream);
      return absl::InvalidArgumentError("gzip: data is not valid gzip");
    }
    out.append(buffer, sizeof(buffer) - stream.avail_out);
    if (out.size() > max_bytes) {
      inflateEnd(&stream);
      return absl::InvalidArgumentError(
          fmt::format("gzip: inflates to more than {} bytes", max_bytes));
    }
    if (result == Z_OK && stream.avail_in == 0 && stream.avail_out != 0) {
      inflateEnd(&stream);
      return absl::InvalidArgumentError("gzip: data is truncated");
    }
  }
  inflateEnd(&stream);
  return out;
}

absl::StatusOr<std::string> ExtractFileFromTarGz(std::string_view tar_gz, std::string_view name) {
  auto tar = Gunzip(tar_gz);
  if (!tar.ok()) return tar.status();
  const std::string_view wanted = StripDotSlash(name);
  std::string_view rest(*tar);
  std::string pax_path;
  while (rest.size() >= kBlock) {
    const std::string_view header = rest.substr(0, kBlock);
    if (header.find_first_not_of('\0') == std::string_view::npos) break;  // end of archive
    auto size = Octal(Field(header, 124, 12));
    if (!size.ok()) return size.status();
    const uint64_t padded = (*size + kBlock - 1) / kBlock * kBlock;
    if (rest.size() - kBlock < padded) return absl::InvalidArgumentError("tar: truncated entry");
    const std::string_view body = rest.substr(kBlock, *size);
    const char type = header[156];
    std::string path(Field(header, 0, 100));
    const std::string_view prefix = Field(header, 345, 155);
    if (Field(header, 257, 5) == "ustar" && !prefix.empty()) {
      path = std::string(prefix) + "/" + path;
    }
    if (!pax_path.empty()) path = std::exchange(pax_path, {});
    if (type == 'x') {
      pax_path = PaxPath(body);
    } else if ((type == '0' || type == '\0') && StripDotSlash(path) == wanted) {
      return std::string(body);
    }
    rest.remove_prefix(kBlock + padded);
  }
  return absl::NotFoundError(fmt::format("archive has no file \"{}\"", wanted));
}

}  // namespace tr::reconciler::talos
