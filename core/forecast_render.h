// The drain forecast (disruption_types.h) as `plan` prints it: text, a markdown section of the
// pull-request comment, and the report's JSON value.
//
// Pure; thread-compatible.
#pragma once

#include <string>

#include "core/disruption_types.h"
#include "nlohmann/json.hpp"

namespace tr::core {

// Lines indented by `indent`, from "drain forecast (onTimeout: halt):" on.
std::string ForecastText(const DrainForecast& forecast, const std::string& indent);

// "#### Drain forecast" and what follows, ending in a blank line.
std::string ForecastMarkdown(const DrainForecast& forecast);

// {"unavailable", "onTimeout", "nodes": [{"node", "blocked", "hazards": [{"kind", "pod",
// "reason"}], "durationSeconds": [low, high] | null}], "betterOrder", "legacySteps",
// "durationSeconds"}.
nlohmann::ordered_json ForecastJson(const DrainForecast& forecast);

}  // namespace tr::core
