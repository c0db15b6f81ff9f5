#include "tests/sim/common/ids.h"

#include <openssl/rand.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>

#include "fmt/format.h"

namespace tr::sim {

std::string NewUuid() {
  std::array<unsigned char, 16> b{};
  RAND_bytes(b.data(), static_cast<int>(b.size()));
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  std::string hex;
  for (unsigned char c : b) hex += fmt::format("{:02x}", c);
  return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                     hex.substr(16, 4), hex.substr(20));
}

std::string StableUuid(const std::string& key) {
  const uint64_t a = std::hash<std::string>{}(key);
  const uint64_t b = std::hash<std::string>{}(key + "\n");
  const std::string hex = fmt::format("{:016x}{:016x}", a, b);
  return fmt::format("{}-{}-4{}-8{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(13, 3),
                     hex.substr(17, 3), hex.substr(20));
}

std::string NewXid(std::chrono::system_clock::time_point time) {
  static std::atomic<uint32_t> counter{0};
  static const uint32_t machine = [] {
    uint32_t m = 0;
    RAND_bytes(reinterpret_cast<unsigned char*>(&m), sizeof m);
    return m;
  }();
  const auto secs = static_cast<uint32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count());
  const uint32_t pid = static_cast<uint32_t>(getpid());
  const uint32_t count = counter.fetch_add(1);
  std::array<uint8_t, 12> id = {
      static_cast<uint8_t>(secs >> 24),    static_cast<uint8_t>(secs >> 16),
      static_cast<uint8_t>(secs >> 8),     static_cast<uint8_t>(secs),
      static_cast<uint8_t>(machine >> 16), static_cast<uint8_t>(machine >> 8),
      static_cast<uint8_t>(machine),       static_cast<uint8_t>(pid >> 8),
      static_cast<uint8_t>(pid),           static_cast<uint8_t>(count >> 16),
      static_cast<uint8_t>(count >> 8),    static_cast<uint8_t>(count)};
  static constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuv";
  // 96 bits -> 20 base32 digits (the last digit carries 1 bit of padding).
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (uint8_t byte : id) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += kAlphabet[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += kAlphabet[(buffer << (5 - bits)) & 31];
  return out;
}

}  // namespace tr::sim
