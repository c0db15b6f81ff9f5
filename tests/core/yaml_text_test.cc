#include "core/yaml_text.h"

#include <gtest/gtest.h>

namespace tr::core {
namespace {

struct TextCase {
  std::string name;
  std::string text;
  bool ok;
  size_t offset;
  int line;
  int column;
  std::string message;
};

class YamlTextTest : public testing::TestWithParam<TextCase> {};

TEST_P(YamlTextTest, AcceptsOrNamesTheFirstBadByte) {
  const TextCase& c = GetParam();
  std::optional<YamlTextError> error = CheckYamlText(c.text);
  if (c.ok) {
    EXPECT_FALSE(error.has_value()) << error->message;
    return;
  }
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->offset, c.offset);
  EXPECT_EQ(error->line, c.line);
  EXPECT_EQ(error->column, c.column);
  EXPECT_EQ(error->message, c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, YamlTextTest,
    testing::Values(
        TextCase{"Ascii", "a: b\n", true, 0, 0, 0, ""}, TextCase{"Empty", "", true, 0, 0, 0, ""},
        TextCase{"TabsAndCrlf", "a:\tb\r\nc: d\r\n", true, 0, 0, 0, ""},
        TextCase{"TwoThreeFourByte", "a: \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\n", true, 0, 0, 0,
                 ""},
        TextCase{"LeadingBom",
                 "\xEF\xBB\xBF"
                 "a: b\n",
                 true, 0, 0, 0, ""},
        TextCase{"NextLine", "a: \xC2\x85\n", true, 0, 0, 0, ""},
        TextCase{"MaxCodePoint", "a: \xF4\x8F\xBF\xBD\n", true, 0, 0, 0, ""},
        TextCase{"Nul", std::string("a: b\nc: \0d\n", 11), false, 8, 2, 4,
                 "NUL byte is not allowed"},
        TextCase{"Bell", "a: \x07\n", false, 3, 1, 4, "control character U+0007 is not allowed"},
        TextCase{"Delete", "a: \x7F\n", false, 3, 1, 4, "control character U+007F is not allowed"},
        TextCase{"C1Control", "a: \xC2\x9B\n", false, 3, 1, 4,
                 "control character U+009B is not allowed"},
        TextCase{"StrayContinuation", "a: \x80\n", false, 3, 1, 4,
                 "invalid UTF-8: unexpected continuation byte"},
        TextCase{"OverlongTwoByteC0", "a: \xC0\xAF\n", false, 3, 1, 4,
                 "invalid UTF-8: overlong encoding"},
        TextCase{"OverlongTwoByteC1", "a: \xC1\xBF\n", false, 3, 1, 4,
                 "invalid UTF-8: overlong encoding"},
        TextCase{"OverlongThreeByte", "a: \xE0\x80\xAF\n", false, 3, 1, 4,
                 "invalid UTF-8: overlong encoding"},
        TextCase{"OverlongFourByte", "a: \xF0\x80\x80\xAF\n", false, 3, 1, 4,
                 "invalid UTF-8: overlong encoding"},
        TextCase{"HighSurrogate", "a: \xED\xA0\x80\n", false, 3, 1, 4,
                 "invalid UTF-8: encoded surrogate"},
        TextCase{"LowSurrogate", "x\nab: \xED\xBF\xBF\n", false, 6, 2, 5,
                 "invalid UTF-8: encoded surrogate"},
        TextCase{"AboveMax", "a: \xF4\x90\x80\x80\n", false, 3, 1, 4,
                 "invalid UTF-8: code point above U+10FFFF"},
        TextCase{"F5", "a: \xF5\x80\x80\x80\n", false, 3, 1, 4,
                 "invalid UTF-8: byte can never appear in UTF-8"},
        TextCase{"FF",
                 "\xFF\xFE"
                 "a\x00",
                 false, 0, 1, 1, "invalid UTF-8: byte can never appear in UTF-8"},
        TextCase{"TruncatedAtEnd", "a: \xE2\x82", false, 3, 1, 4,
                 "invalid UTF-8: truncated sequence"},
        TextCase{"TruncatedMidway", "a: \xE2\x82x\n", false, 3, 1, 4,
                 "invalid UTF-8: truncated sequence"},
        TextCase{"NonCharacter", "a: \xEF\xBF\xBE\n", false, 3, 1, 4,
                 "non-character U+FFFE is not allowed"},
        TextCase{"BomInside", "a: \xEF\xBB\xBF\n", false, 3, 1, 4,
                 "byte order mark is only allowed at the start"},
        TextCase{"ColumnAfterBom",
                 "\xEF\xBB\xBF"
                 "a: \x01\n",
                 false, 6, 1, 4, "control character U+0001 is not allowed"}),
    [](const testing::TestParamInfo<TextCase>& param_info) { return param_info.param.name; });

TEST(MessageSafeTest, EscapesWhatCouldForgeOrHideLogLines) {
  EXPECT_EQ(MessageSafe("plain \xC3\xA9 text"), "plain \xC3\xA9 text");
  EXPECT_EQ(MessageSafe("a\nb\rc\td"), "a\\x0Ab\\x0Dc\\x09d");
  EXPECT_EQ(MessageSafe("\x1B[2Jcleared"), "\\x1B[2Jcleared");
  EXPECT_EQ(MessageSafe("abc\xE2\x80\xAE"
                        "evil"),
            "abc\\u{202E}evil");
  EXPECT_EQ(MessageSafe("\xC2\x9B"), "\\u{009B}");
  EXPECT_EQ(MessageSafe("bad\xFF\xED\xA0\x80"), "bad\\xFF\\xED\\xA0\\x80");
  EXPECT_EQ(MessageSafe(std::string(1000, 'x'), 10), std::string(10, 'x') + "...");
  // Never cuts inside a UTF-8 sequence.
  EXPECT_EQ(MessageSafe("\xC3\xA9\xC3\xA9\xC3\xA9", 3), "\xC3\xA9\xC3\xA9...");
}

}  // namespace
}  // namespace tr::core
