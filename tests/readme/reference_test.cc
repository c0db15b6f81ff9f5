// docs/reference/ is what scripts/docs-reference makes from the --help of this build: a flag
// whose help text changed, or a new flag, fails here until the pages are generated again.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/manual_pages.h"
#include "tests/support/process.h"

namespace tr {
namespace {

namespace fs = std::filesystem;
using gitsource::testing::ProcessResult;
using gitsource::testing::RunCommand;

const fs::path kSourceDir = TR_SOURCE_DIR;

std::set<std::string> PagesIn(const fs::path& dir) {
  std::set<std::string> pages;
  if (!fs::exists(dir)) return pages;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    pages.insert(entry.path().filename().string());
  }
  return pages;
}

// The first line where `checked_in` and `generated` differ, as "line N: ... instead of ...",
// or "" when they are equal.
std::string FirstDifference(const std::string& checked_in, const std::string& generated) {
  std::istringstream a(checked_in), b(generated);
  std::string line_a, line_b;
  for (int n = 1;; ++n) {
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_b = static_cast<bool>(std::getline(b, line_b));
    if (!more_a && !more_b) return "";
    if (more_a != more_b || line_a != line_b) {
      return "line " + std::to_string(n) + ": \"" + (more_a ? line_a : "(end)") +
             "\" where --help now says \"" + (more_b ? line_b : "(end)") + "\"";
    }
  }
}

TEST(ReferenceTest, IsWhatScriptsDocsReferenceGenerates) {
  const gitsource::testing::TempDir tmp;
  const ProcessResult r =
      RunCommand({"bash", (kSourceDir / "scripts/docs-reference").string(), "--build",
                  TR_BINARY_DIR, "--out", (tmp / "reference").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string fix =
      "\nThe flag reference is generated from --help: run scripts/docs-reference (TR_BUILD_DIR="
      "<this build> when it is not build/) and commit docs/reference/.";
  const std::set<std::string> generated = PagesIn(tmp / "reference");
  ASSERT_FALSE(generated.empty());
  EXPECT_EQ(PagesIn(kSourceDir / "docs/reference"), generated) << fix;
  for (const std::string& page : generated) {
    const std::string path = "docs/reference/" + page;
    const std::string difference =
        FirstDifference(test_support::ReadPage(kSourceDir, path),
                        test_support::ReadPage(tmp.path(), "reference/" + page));
    EXPECT_EQ(difference, "") << path << " is not what the binary's --help says now." << fix;
  }
}

}  // namespace
}  // namespace tr
