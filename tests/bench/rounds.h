// What the benchmarks that repeat a measure in rounds share: their one option, `--rounds N`,
// and the percentile of what the rounds measured.
//
// Thread-compatible.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace tr::bench {

// The value below which a share `p` (0..1) of `values` lies, by rank; `values` not empty.
inline double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

// `--rounds N` from the command line, `default_rounds` without it; 0 after printing why when
// the arguments are wrong (an unknown option, fewer than one round).
inline int RoundsFromArgs(int argc, char** argv, int default_rounds) {
  int rounds = default_rounds;
  for (int i = 1; i < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") != 0 || i + 1 >= argc) {
      std::fprintf(stderr, "unknown option %s (usage: --rounds N)\n", argv[i]);
      return 0;
    }
    rounds = std::atoi(argv[i + 1]);
  }
  if (rounds < 1) std::fprintf(stderr, "--rounds must be at least 1\n");
  return std::max(rounds, 0);
}

}  // namespace tr::bench
