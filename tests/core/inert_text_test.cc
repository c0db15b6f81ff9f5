#include "core/inert_text.h"

#include <gtest/gtest.h>

namespace tr::core {
namespace {

constexpr char kHostile[] =
    "moved to <!channel> <https://evil.example|login> [login](https://evil.example) "
    "@everyone @acme/admins | *bold* `code`\n# heading";

TEST(InertTextTest, MarkdownEscapesWhatMarkdownReadsAndBreaksMentions) {
  EXPECT_EQ(InertMarkdown(kHostile),
            "moved to \\<\\!channel\\> \\<https://evil.example\\|login\\> "
            "\\[login\\]\\(https://evil.example\\) @\u200beveryone @\u200bacme/admins \\| "
            "\\*bold\\* \\`code\\` \\# heading");
  EXPECT_EQ(InertMarkdown("node w-1: drained, 3/5 nodes (v1.12.0)"),
            "node w-1: drained, 3/5 nodes \\(v1.12.0\\)");
}

TEST(InertTextTest, AngleMarkupTurnsLinksAndMentionsIntoEntities) {
  EXPECT_EQ(InertAngleMarkup("<!channel> <https://evil.example|login> a&b @here\nnext"),
            "&lt;!channel&gt; &lt;https://evil.example|login&gt; a&amp;b @\u200bhere\nnext");
  EXPECT_EQ(InertAngleMarkup("plain text, 3/5"), "plain text, 3/5");
}

}  // namespace
}  // namespace tr::core
