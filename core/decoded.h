// The result of decoding one user file: a value, or the problems that kept it from being one.
//
// Values only; thread-compatible.
#pragma once

#include <optional>

#include "core/diagnostic.h"

namespace tr::core {

template <typename T>
struct [[nodiscard]] Decoded {
  std::optional<T> value;   // set exactly when the file decoded and validated
  Diagnostics diagnostics;  // empty when `value` is set; otherwise at least one

  bool ok() const { return value.has_value(); }
};

}  // namespace tr::core
