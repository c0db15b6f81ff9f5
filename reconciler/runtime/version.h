// The reconciler's version (the CMake project version) and what the build put into the binary:
// the commit and build date main() stamps (cmake/build_stamp.cmake), the compiler, and the
// versions of the libraries linked in.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"

namespace tr::reconciler {

std::string_view ReconcilerVersion();

struct BuildStamp {
  std::string_view commit = "unknown";  // the source's commit; "-dirty" when files had changed
  std::string_view date = "unknown";    // UTC, ISO 8601: the commit's date or SOURCE_DATE_EPOCH
};

// Called once by main() before anything reads it; the library's own tests run unstamped.
void SetBuildStamp(BuildStamp stamp);
BuildStamp GetBuildStamp();

// "GCC 12.2.0" or "clang 14.0.6".
std::string CompilerVersion();
// (name, version), in a fixed order: the libraries built in and the shared ones it runs with.
std::vector<std::pair<std::string, std::string>> LinkedLibraryVersions();

// `version` in text (several lines) and as the JSON document of `version -o json`.
std::string VersionText();
nlohmann::json VersionJson();
// One line, for `--version` and the daemon's start log: "0.1.0 (commit 1a2b3c4, built …)".
std::string VersionLine();

}  // namespace tr::reconciler
