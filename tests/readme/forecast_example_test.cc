// docs/pull-requests.md shows the drain forecast that scripts/docs-forecast-example makes from
// this build's forecast-example (a pull request's real plan against talos-sim): a changed
// forecast or rendering fails here until the page is generated again.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/manual_pages.h"
#include "tests/support/process.h"

namespace tr {
namespace {

namespace fs = std::filesystem;
using gitsource::testing::ProcessResult;
using gitsource::testing::RunCommand;

const fs::path kForecastSource = TR_SOURCE_DIR;

TEST(ForecastExampleTest, DocsShowWhatScriptsDocsForecastExampleGenerates) {
  const gitsource::testing::TempDir tmp;
  const ProcessResult r =
      RunCommand({"bash", (kForecastSource / "scripts/docs-forecast-example").string(), "--build",
                  TR_BINARY_DIR, "--out", (tmp / "pull-requests.md").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string generated = test_support::ReadPage(tmp.path(), "pull-requests.md");
  // The patterns the page explains, each on its node.
  for (const char* seen : {"| `shop-w0` | **blocks** `shop/billing-0`", "**blocks** `shop/cart-a`",
                           "| `shop-w1` |", "**stays Pending** `shop/gpu-a`",
                           "**deleted** `shop/debug`", "| `shop-w2` |",
                           "**stays Pending** `shop/pg-0`", "**data** `shop/search-0`"}) {
    EXPECT_NE(generated.find(seen), std::string::npos) << seen << "\n" << generated;
  }
  EXPECT_EQ(test_support::ReadPage(kForecastSource, "docs/pull-requests.md"), generated)
      << "The drain forecast example is generated: run scripts/docs-forecast-example "
         "(TR_BUILD_DIR=<this build> when it is not build/) and commit docs/pull-requests.md.";
}

}  // namespace
}  // namespace tr
