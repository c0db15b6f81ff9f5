// The resident memory of this process, for tests and benchmarks that bound what an attack may
// make it grow by.
//
// Thread-safe.
#pragma once

#include <fstream>
#include <string>

namespace tr::test_support {

// VmRSS from /proc/self/status, in KiB; -1 when it cannot be read.
inline long ResidentKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace tr::test_support
