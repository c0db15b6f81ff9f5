#include "core/diagnostic.h"

#include "fmt/format.h"

namespace tr::core {

std::string Diagnostic::ToString() const {
  std::string s = file;
  if (line > 0) s += fmt::format(":{}:{}", line, column);
  s += ": ";
  if (!path.empty()) s += path + ": ";
  return s + message;
}

}  // namespace tr::core
