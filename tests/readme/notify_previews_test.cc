// docs/notifications.md shows what scripts/docs-notify-previews makes from this build's
// notify-previews: a changed payload or preview fails here until the page is generated again.
// Every format the daemon knows has a preview.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "reconciler/features/notify/message_format.h"
#include "tests/notify_preview/preview.h"
#include "tests/notify_preview/text_box.h"
#include "tests/support/manual_pages.h"
#include "tests/support/process.h"

namespace tr {
namespace {

namespace fs = std::filesystem;
using gitsource::testing::ProcessResult;
using gitsource::testing::RunCommand;

const fs::path kPreviewsSource = TR_SOURCE_DIR;

TEST(NotifyPreviewsTest, DocsShowWhatScriptsDocsNotifyPreviewsGenerates) {
  const gitsource::testing::TempDir tmp;
  const ProcessResult r =
      RunCommand({"bash", (kPreviewsSource / "scripts/docs-notify-previews").string(), "--build",
                  TR_BINARY_DIR, "--out", (tmp / "notifications.md").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string generated = test_support::ReadPage(tmp.path(), "notifications.md");
  ASSERT_NE(generated.find("format=googlechat"), std::string::npos);
  EXPECT_EQ(test_support::ReadPage(kPreviewsSource, "docs/notifications.md"), generated)
      << "The notification previews are generated: run scripts/docs-notify-previews "
         "(TR_BUILD_DIR=<this build> when it is not build/) and commit docs/notifications.md.";
}

// Every line of every preview box on the page, from its ┌ to its └, is as wide as the box: a
// line break inside a message (or a wide character) would break its right edge.
TEST(NotifyPreviewsTest, EveryBoxLineIsAsWideAsItsBox) {
  const std::vector<std::string> lines =
      absl::StrSplit(test_support::ReadPage(kPreviewsSource, "docs/notifications.md"), '\n');
  size_t boxes = 0, width = 0;
  bool inside = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.starts_with("┌")) {
      inside = true, width = notify_preview::DisplayWidth(line), ++boxes;
      continue;
    }
    if (!inside) continue;
    EXPECT_EQ(notify_preview::DisplayWidth(line), width)
        << "docs/notifications.md:" << i + 1 << ": " << line;
    EXPECT_TRUE(line.starts_with("│") || line.starts_with("├") || line.starts_with("└"))
        << "docs/notifications.md:" << i + 1 << ": " << line;
    inside = !line.starts_with("└");
  }
  EXPECT_FALSE(inside) << "a box is not closed";
  EXPECT_GE(boxes, notify_preview::Previews().size()) << "a format's preview has no box";
}

TEST(NotifyPreviewsTest, EveryFormatHasAPreview) {
  // MessageFormatNames() says "json, slack, ... or googlechat".
  const std::vector<std::string> formats = absl::StrSplit(
      absl::StrReplaceAll(reconciler::notify::MessageFormatNames(), {{" or ", ", "}}), ", ");
  std::vector<std::string> previewed;
  for (const notify_preview::FormatPreview& p : notify_preview::Previews()) {
    previewed.emplace_back(p.format);
  }
  EXPECT_EQ(previewed, formats)
      << "add the new format's preview to tests/notify_preview/preview.cc";
}

}  // namespace
}  // namespace tr
