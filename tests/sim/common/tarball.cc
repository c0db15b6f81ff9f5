#include "tests/sim/common/tarball.h"

#include <zlib.h>

#include <cstring>

#include "fmt/format.h"

namespace tr::sim {
namespace {

void Octal(char* field, size_t width, uint64_t value) {
  std::string text = fmt::format("{:0{}o}", value, width - 1);
  std::memcpy(field, text.data(), width - 1);
  field[width - 1] = '\0';
}

std::string Tar(const std::string& name, const std::string& content, int64_t mtime) {
  char header[512] = {};
  std::memcpy(header, name.data(), std::min<size_t>(name.size(), 99));
  Octal(header + 100, 8, 0600);
  Octal(header + 108, 8, 0);
  Octal(header + 116, 8, 0);
  Octal(header + 124, 12, content.size());
  Octal(header + 136, 12, static_cast<uint64_t>(mtime));
  std::memset(header + 148, ' ', 8);
  header[156] = '0';
  std::memcpy(header + 257, "ustar", 6);
  std::memcpy(header + 263, "00", 2);
  unsigned checksum = 0;
  for (char c : header) checksum += static_cast<unsigned char>(c);
  std::string sum = fmt::format("{:06o}", checksum);
  std::memcpy(header + 148, sum.data(), 6);
  header[154] = '\0';
  header[155] = ' ';
  std::string out(header, sizeof header);
  out += content;
  out.append((512 - content.size() % 512) % 512, '\0');
  out.append(1024, '\0');
  return out;
}

std::string Gzip(const std::string& data) {
  z_stream zs{};
  deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, data.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

std::string TarGzSingleFile(const std::string& name, const std::string& content,
                            std::chrono::system_clock::time_point mtime) {
  const int64_t secs =
      std::chrono::duration_cast<std::chrono::seconds>(mtime.time_since_epoch()).count();
  return Gzip(Tar(name, content, secs));
}

}  // namespace tr::sim
