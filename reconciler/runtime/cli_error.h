// The one shape of a command's error on stderr: "error: " and a message in lower case, one
// line, as kubectl and git write theirs (and as our "warning: " lines already were). Every
// command writes its errors through ErrorLine, so a script or a person can find them by one
// prefix.
#pragma once

#include <string>
#include <string_view>

namespace tr::reconciler {

inline constexpr std::string_view kErrorPrefix = "error: ";

// "error: <message>\n".
inline std::string ErrorLine(std::string_view message) {
  std::string line(kErrorPrefix);
  line += message;
  line += '\n';
  return line;
}

}  // namespace tr::reconciler
