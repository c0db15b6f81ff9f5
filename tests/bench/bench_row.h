// A row of the table scripts/bench writes: a benchmark prints "ROW {json}" on its standard
// output for each figure it contributes (scripts/bench collects them).
//
// Thread-compatible.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "nlohmann/json.hpp"

namespace tr::bench {

// One row of the table scripts/bench writes: "ROW {json}" on standard output. `met` is
// nullopt when the row has no goal.
inline void PrintBenchRow(const std::string& measure, const std::string& goal,
                          const std::string& figure, std::optional<bool> met,
                          const std::string& note = "") {
  nlohmann::json row = {{"measure", measure}, {"goal", goal}, {"figure", figure}, {"note", note}};
  row["met"] = met ? nlohmann::json(*met) : nlohmann::json(nullptr);
  std::printf("ROW %s\n", row.dump().c_str());
  std::fflush(stdout);
}

}  // namespace tr::bench
