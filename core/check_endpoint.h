// Where a health check that asks over HTTP asks (`url`, `caFile`): shared by the check types
// that have one (http_check.h, prometheus_check.h).
//
// Values; thread-compatible.
#pragma once

#include <string>

namespace tr::core {

class MappingReader;

struct CheckEndpoint {
  std::string url;
  std::string ca_file;  // https: PEM file of the CAs to trust instead of the system's

  // Reads `url` (required: http:// or https:// with a host) and `caFile` (optional: an
  // absolute path) of `m`; false after reporting a problem.
  bool Decode(const MappingReader& m);
};

}  // namespace tr::core
