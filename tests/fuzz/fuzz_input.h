// What every fuzz target of tests/fuzz shares: the input as a string_view, and a selector byte
// for targets that fuzz several parsers or variants with one corpus.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tr::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The first byte picks one of `choices`; the rest is the input. {0, whole} when empty.
struct Selected {
  unsigned choice;
  std::string_view rest;
};
inline Selected Select(const uint8_t* data, size_t size, unsigned choices) {
  if (size == 0) return {0, {}};
  return {data[0] % choices, AsText(data + 1, size - 1)};
}

}  // namespace tr::fuzz
