// The pages of the manual, for the tests that run and check them (tests/readme, tests/chart):
// README.md, then every docs/**/*.md in path order. docs/reference/ is generated from --help
// (scripts/docs-reference), so it is left out unless asked for: a flag listed there is not
// documented by a person.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tr::test_support {

// Paths relative to `source`, the repository root.
inline std::vector<std::string> ManualPages(const std::filesystem::path& source,
                                            bool with_reference = false) {
  namespace fs = std::filesystem;
  std::vector<std::string> pages;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(source / "docs")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".md") continue;
    const std::string relative = fs::relative(entry.path(), source).generic_string();
    if (!with_reference && relative.starts_with("docs/reference/")) continue;
    pages.push_back(relative);
  }
  std::sort(pages.begin(), pages.end());
  pages.insert(pages.begin(), "README.md");
  return pages;
}

inline std::string ReadPage(const std::filesystem::path& source, const std::string& page) {
  std::ifstream in(source / page);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace tr::test_support
