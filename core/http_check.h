// Health-check type `http`: a GET of `url` answers `expectStatus` (200). Decoded and described
// here; one alternative of HealthCheckSpec (health_check.h); probed by ProbeHttp
// (reconciler/operations/gates/probes.h).
//
// Values; thread-compatible.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "core/check_endpoint.h"

namespace tr::core {

struct HttpCheck {
  static constexpr std::string_view kType = "http";
  // The keys it takes besides name, type and timeout.
  static constexpr std::array<std::string_view, 3> kKeys = {"url", "caFile", "expectStatus"};

  CheckEndpoint endpoint;
  int expect_status = 200;  // the status code that counts as healthy

  // Its keys besides the endpoint (`expectStatus`, 100-599); false after reporting a problem.
  bool DecodeKeys(const MappingReader& m);
  std::string Describe() const;  // "GET <url> answers 200"
};

}  // namespace tr::core
