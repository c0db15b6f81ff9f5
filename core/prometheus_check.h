// Health-check type `prometheus`: an instant `query` of the Prometheus at `url` answers a
// single number, at most `max` when set. Decoded and described here; one alternative of
// HealthCheckSpec (health_check.h); probed by ProbePrometheus
// (reconciler/operations/gates/probes.h).
//
// Values; thread-compatible.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "core/check_endpoint.h"

namespace tr::core {

struct PrometheusCheck {
  static constexpr std::string_view kType = "prometheus";
  static constexpr std::array<std::string_view, 4> kKeys = {"url", "caFile", "query", "max"};

  CheckEndpoint endpoint;
  std::string query;                // an instant query
  std::optional<double> max_value;  // healthy while result <= max_value

  // `query` (required, not empty) and `max`; false after reporting a problem.
  bool DecodeKeys(const MappingReader& m);
  std::string Describe() const;  // "Prometheus <url> query \"<q>\" is <= 0"
};

}  // namespace tr::core
