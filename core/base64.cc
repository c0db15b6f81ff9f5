#include "core/base64.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace tr::core {
namespace {

constexpr int kPad = -2;
constexpr int kBad = -1;

constexpr std::array<int, 256> DecodeTable() {
  std::array<int, 256> table{};
  for (int& v : table) v = kBad;
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
  }
  table['='] = kPad;
  return table;
}

constexpr std::array<int, 256> kTable = DecodeTable();

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

std::optional<std::string> DecodeBase64(std::string_view text) {
  std::string compact;
  compact.reserve(text.size());
  for (char c : text) {
    if (!IsSpace(c)) compact.push_back(c);
  }
  if (compact.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(compact.size() / 4 * 3);
  for (size_t at = 0; at < compact.size(); at += 4) {
    const bool last = at + 4 == compact.size();
    uint32_t bits = 0;
    int padding = 0;
    for (size_t i = 0; i < 4; ++i) {
      const int v = kTable[static_cast<unsigned char>(compact[at + i])];
      if (v == kBad) return std::nullopt;
      if (v == kPad) {
        // Only the last quantum pads, only its last two places, and nothing follows a pad.
        if (!last || i < 2) return std::nullopt;
        ++padding;
      } else if (padding > 0) {
        return std::nullopt;
      }
      bits = (bits << 6) | static_cast<uint32_t>(v == kPad ? 0 : v);
    }
    out.push_back(static_cast<char>((bits >> 16) & 0xff));
    if (padding < 2) out.push_back(static_cast<char>((bits >> 8) & 0xff));
    if (padding < 1) out.push_back(static_cast<char>(bits & 0xff));
  }
  return out;
}

std::string EncodeBase64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t at = 0; at < bytes.size(); at += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - at);
    uint32_t bits = 0;
    for (size_t i = 0; i < 3; ++i) {
      bits = (bits << 8) | (i < n ? static_cast<unsigned char>(bytes[at + i]) : 0u);
    }
    for (size_t i = 0; i < 4; ++i) {
      out.push_back(i <= n ? kAlphabet[(bits >> (18 - 6 * i)) & 0x3f] : '=');
    }
  }
  return out;
}

}  // namespace tr::core
