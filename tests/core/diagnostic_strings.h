// Test helper: diagnostics as the strings people read, so that a test asserts file, line,
// column, path and message at once: "clusters/x.yaml:14:7: spec.nodes[2].role: must be ...".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"

namespace tr::core {

inline std::vector<std::string> DiagnosticStrings(const Diagnostics& diagnostics) {
  std::vector<std::string> out;
  for (const Diagnostic& d : diagnostics) out.push_back(d.ToString());
  return out;
}

// `text` with the single occurrence of `from` replaced by `to`; "" (which fails the test's
// expectations loudly) when `from` does not occur exactly once.
inline std::string ReplaceOnce(std::string_view text, std::string_view from, std::string_view to) {
  const size_t at = text.find(from);
  if (at == std::string_view::npos || text.find(from, at + 1) != std::string_view::npos) return "";
  std::string out(text);
  out.replace(at, from.size(), to);
  return out;
}

}  // namespace tr::core
