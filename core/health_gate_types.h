// A policy's health checks as the rollout records them (health_gates.h folds answers into
// it): the last answer of each check, and since when a failing one holds the rollout. Here,
// apart from the rules, so that the status and its decoder can use it.
//
// Thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/timestamp.h"

namespace tr::core {

struct GateResult {
  std::string name;  // the health check's name
  bool healthy = false;
  std::string message;  // its last answer: "HTTP 200", "value 0 <= 1", "no result", ...
  TimePoint checked;

  bool operator==(const GateResult&) const = default;
};

struct GateState {
  std::vector<GateResult> results;         // the last result of each check, in policy order
  std::optional<TimePoint> failing_since;  // set while the rollout waits on a failing check

  bool operator==(const GateState&) const = default;
};

}  // namespace tr::core
