// A located error in a user's file, as people read it in CI logs and editors:
// `clusters/prod.yaml:14:7: spec.nodes[2].role: must be controlplane or worker`.
//
// Values only; thread-compatible.
#pragma once

#include <string>
#include <vector>

namespace tr::core {

struct Diagnostic {
  std::string file;     // repository-relative path, e.g. "clusters/prod.yaml"
  int line = 0;         // 1-based; 0 when the position is unknown
  int column = 0;       // 1-based; 0 when the position is unknown
  std::string path;     // field path, e.g. "spec.nodes[2].role"; empty for the whole file
  std::string message;  // what is wrong, in words a person can act on

  // "file:line:column: path: message"; the position and the path are left out when unknown.
  std::string ToString() const;
};

using Diagnostics = std::vector<Diagnostic>;

}  // namespace tr::core
