#include "core/yaml_decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using testing::ElementsAre;
using testing::IsEmpty;

// Reads the value of key `v` in `yaml` with `read`, returning the value's printed form (or
// "none") and the diagnostics.
template <typename Read>
std::pair<std::string, std::vector<std::string>> ReadV(const std::string& yaml, Read read) {
  ParsedYaml parsed = ParseStrictYaml("f.yaml", yaml);
  if (!parsed.root) return {"parse error", DiagnosticStrings(parsed.diagnostics)};
  DecodeContext ctx("f.yaml");
  MappingReader m(RootField(ctx, *parsed.root), {"v"});
  auto value = read(m.Optional("v"));
  std::string shown = value ? testing::PrintToString(*value) : "none";
  return {shown, DiagnosticStrings(ctx.TakeDiagnostics())};
}

struct ScalarCase {
  std::string yaml;
  std::string value;
  std::string diagnostic;  // empty: none
};

std::vector<std::string> Expected(const ScalarCase& c) {
  if (c.diagnostic.empty()) return {};
  return {c.diagnostic};
}

class ReadStringTest : public testing::TestWithParam<ScalarCase> {};
TEST_P(ReadStringTest, Reads) {
  auto [value, diagnostics] = ReadV(GetParam().yaml, ReadString);
  EXPECT_EQ(value, GetParam().value);
  EXPECT_EQ(diagnostics, Expected(GetParam()));
}
INSTANTIATE_TEST_SUITE_P(
    Cases, ReadStringTest,
    testing::Values(
        ScalarCase{"v: abc", "\"abc\"", ""}, ScalarCase{"v: 1.10", "\"1.10\"", ""},
        ScalarCase{"v: \"yes\"", "\"yes\"", ""}, ScalarCase{"v: ''", "\"\"", ""},
        ScalarCase{"other: 1", "none", "f.yaml:1:1: other: unknown key \"other\""},
        ScalarCase{"v:", "none", "f.yaml:1:1: v: must be a string, not empty"},
        ScalarCase{"v: null", "none", "f.yaml:1:1: v: must be a string, not empty"},
        ScalarCase{"v: [a]", "none", "f.yaml:1:4: v: must be a string, not a list"},
        ScalarCase{"v: {a: b}", "none", "f.yaml:1:4: v: must be a string, not a mapping"},
        ScalarCase{"v: yes", "none",
                   "f.yaml:1:4: v: must be a string; write \"yes\" in quotes if you mean the text"},
        ScalarCase{"v: Off", "none",
                   "f.yaml:1:4: v: must be a string; write \"Off\" in quotes if you mean the "
                   "text"},
        ScalarCase{"v: true", "none",
                   "f.yaml:1:4: v: must be a string; write \"true\" in quotes if you mean the "
                   "text"}));

class ReadBoolTest : public testing::TestWithParam<ScalarCase> {};
TEST_P(ReadBoolTest, Reads) {
  auto [value, diagnostics] = ReadV(GetParam().yaml, ReadBool);
  EXPECT_EQ(value, GetParam().value);
  EXPECT_EQ(diagnostics, Expected(GetParam()));
}
INSTANTIATE_TEST_SUITE_P(
    Cases, ReadBoolTest,
    testing::Values(
        ScalarCase{"v: true", "true", ""}, ScalarCase{"v: false", "false", ""},
        ScalarCase{"v: yes", "none", "f.yaml:1:4: v: must be true or false"},
        ScalarCase{"v: True", "none", "f.yaml:1:4: v: must be true or false"},
        ScalarCase{"v: 1", "none", "f.yaml:1:4: v: must be true or false"},
        ScalarCase{"v: \"true\"", "none", "f.yaml:1:4: v: must be true or false, without quotes"},
        ScalarCase{"v: [true]", "none", "f.yaml:1:4: v: must be true or false, not a list"},
        ScalarCase{"v: ~", "none", "f.yaml:1:1: v: must be true or false, not empty"}));

class ReadIntegerTest : public testing::TestWithParam<ScalarCase> {};
TEST_P(ReadIntegerTest, ReadsWithinBounds) {
  auto [value, diagnostics] =
      ReadV(GetParam().yaml, [](const Field& f) { return ReadInteger(f, 1, 100); });
  EXPECT_EQ(value, GetParam().value);
  EXPECT_EQ(diagnostics, Expected(GetParam()));
}
INSTANTIATE_TEST_SUITE_P(
    Cases, ReadIntegerTest,
    testing::Values(
        ScalarCase{"v: 1", "1", ""}, ScalarCase{"v: 100", "100", ""},
        ScalarCase{"v: 0", "none", "f.yaml:1:4: v: must be at least 1"},
        ScalarCase{"v: -3", "none", "f.yaml:1:4: v: must be at least 1"},
        ScalarCase{"v: 101", "none", "f.yaml:1:4: v: must be at most 100"},
        ScalarCase{"v: 99999999999999999999", "none", "f.yaml:1:4: v: must be at most 100"},
        ScalarCase{"v: -99999999999999999999", "none", "f.yaml:1:4: v: must be at least 1"},
        ScalarCase{"v: 010", "none", "f.yaml:1:4: v: must be a whole number"},
        ScalarCase{"v: 0x10", "none", "f.yaml:1:4: v: must be a whole number"},
        ScalarCase{"v: 1.5", "none", "f.yaml:1:4: v: must be a whole number"},
        ScalarCase{"v: 1_000", "none", "f.yaml:1:4: v: must be a whole number"},
        ScalarCase{"v: \"5\"", "none", "f.yaml:1:4: v: must be a whole number, without quotes"}));

class ReadNumberTest : public testing::TestWithParam<ScalarCase> {};
TEST_P(ReadNumberTest, ReadsFiniteNumbers) {
  auto [value, diagnostics] = ReadV(GetParam().yaml, ReadNumber);
  EXPECT_EQ(value, GetParam().value);
  EXPECT_EQ(diagnostics, Expected(GetParam()));
}
INSTANTIATE_TEST_SUITE_P(
    Cases, ReadNumberTest,
    testing::Values(ScalarCase{"v: 0.5", "0.5", ""}, ScalarCase{"v: 10", "10", ""},
                    ScalarCase{"v: -2", "-2", ""}, ScalarCase{"v: 1e3", "1000", ""},
                    ScalarCase{"v: .inf", "none", "f.yaml:1:4: v: must be a number"},
                    ScalarCase{"v: nan", "none", "f.yaml:1:4: v: must be a number"},
                    ScalarCase{"v: inf", "none", "f.yaml:1:4: v: must be a number"},
                    ScalarCase{"v: 1e999", "none", "f.yaml:1:4: v: must be a number"},
                    ScalarCase{"v: 5%", "none", "f.yaml:1:4: v: must be a number"},
                    ScalarCase{"v: '0.5'", "none",
                               "f.yaml:1:4: v: must be a number, without quotes"}));

class ReadDurationTest : public testing::TestWithParam<ScalarCase> {};
TEST_P(ReadDurationTest, ReadsPositiveDurations) {
  auto [value, diagnostics] = ReadV(GetParam().yaml, [](const Field& f) {
    std::optional<std::chrono::seconds> d = ReadDuration(f, /*allow_zero=*/false);
    return d ? std::optional<int64_t>(d->count()) : std::nullopt;
  });
  EXPECT_EQ(value, GetParam().value);
  EXPECT_EQ(diagnostics, Expected(GetParam()));
}
INSTANTIATE_TEST_SUITE_P(
    Cases, ReadDurationTest,
    testing::Values(ScalarCase{"v: 1h30m", "5400", ""}, ScalarCase{"v: \"90s\"", "90", ""},
                    ScalarCase{"v: 0s", "none", "f.yaml:1:4: v: must be longer than zero"},
                    ScalarCase{"v: 30", "none",
                               "f.yaml:1:4: v: invalid duration \"30\": missing unit: write s, m "
                               "or h after the number, e.g. 30s"},
                    ScalarCase{"v: [30s]", "none",
                               "f.yaml:1:4: v: must be a duration such as 30s, 10m or 1h30m, not "
                               "a list"}));

TEST(ReadDurationTest, ZeroWhenAllowed) {
  auto [value, diagnostics] =
      ReadV("v: 0s", [](const Field& f) { return ReadDuration(f, /*allow_zero=*/true); });
  EXPECT_EQ(value, "0s");
  EXPECT_THAT(diagnostics, IsEmpty());
}

TEST(ReadVersionTest, KeepsTheScalarTextWhetherQuotedOrNot) {
  auto [value, diagnostics] = ReadV("v: 1.12.0", [](const Field& f) {
    std::optional<Version> v = ReadTalosVersion(f);
    return v ? std::optional<std::string>(v->ToString()) : std::nullopt;
  });
  EXPECT_EQ(value, "\"1.12.0\"");
  auto [minor, minor_diagnostics] = ReadV("v: 1.10", [](const Field& f) {
    std::optional<MinorVersion> v = ReadMinorVersion(f);
    return v ? std::optional<std::string>(v->ToString()) : std::nullopt;
  });
  EXPECT_EQ(minor, "\"1.10\"");
  auto [bad, bad_diagnostics] = ReadV("v: 1.12", ReadKubernetesVersion);
  EXPECT_EQ(bad, "none");
  EXPECT_THAT(bad_diagnostics, ElementsAre("f.yaml:1:4: v: invalid Kubernetes version \"1.12\": "
                                           "want MAJOR.MINOR.PATCH"));
}

TEST(ReadEnumTest, ListsTheChoices) {
  enum class Color { kRed, kGreen, kBlue };
  auto read = [](const Field& f) {
    return ReadEnum<Color>(
        f, {{"red", Color::kRed}, {"green", Color::kGreen}, {"blue", Color::kBlue}});
  };
  EXPECT_EQ(ReadV("v: green", read).first, testing::PrintToString(Color::kGreen));
  EXPECT_THAT(ReadV("v: Green", read).second,
              ElementsAre("f.yaml:1:4: v: must be red, green or blue"));
  EXPECT_EQ(ListChoices({"a", "b"}), "a or b");
  EXPECT_EQ(ListChoices({"a"}), "a");
}

TEST(MappingReaderTest, ReportsUnknownKeysWithSuggestionsAndMissingRequiredKeys) {
  ParsedYaml parsed = ParseStrictYaml("f.yaml",
                                      "top:\n"
                                      "  nodeTimout: 5m\n"
                                      "  settle: 1s\n"
                                      "  completelyDifferent: 1\n"
                                      "  Settle: 2s\n");
  ASSERT_TRUE(parsed.root.has_value());
  DecodeContext ctx("f.yaml");
  MappingReader root(RootField(ctx, *parsed.root), {"top"});
  MappingReader top(root.Required("top"), {"nodeTimeout", "settle", "windows"});
  EXPECT_TRUE(top.ok());
  EXPECT_TRUE(top.Optional("settle").present());
  EXPECT_FALSE(top.Required("windows").present());
  MappingReader absent(root.Optional("nothing"), {"a"});
  EXPECT_FALSE(absent.ok());
  EXPECT_FALSE(absent.Required("a").present());  // no second error for an absent parent
  EXPECT_THAT(DiagnosticStrings(ctx.TakeDiagnostics()),
              ElementsAre("f.yaml:2:3: top.nodeTimout: unknown key \"nodeTimout\" (did you mean "
                          "\"nodeTimeout\"?)",
                          "f.yaml:2:3: top.windows: is required",
                          "f.yaml:4:3: top.completelyDifferent: unknown key "
                          "\"completelyDifferent\"",
                          "f.yaml:5:3: top.Settle: unknown key \"Settle\" (did you mean "
                          "\"settle\"?)"));
}

TEST(MappingReaderTest, RefusesANonMapping) {
  ParsedYaml parsed = ParseStrictYaml("f.yaml", "- a\n");
  DecodeContext ctx("f.yaml");
  MappingReader root(RootField(ctx, *parsed.root), {"a"});
  EXPECT_FALSE(root.ok());
  EXPECT_THAT(DiagnosticStrings(ctx.TakeDiagnostics()),
              ElementsAre("f.yaml:1:1: must be a mapping, not a list"));
}

TEST(ReadListTest, GivesIndexedPaths) {
  ParsedYaml parsed = ParseStrictYaml("f.yaml", "l: [a, b]\nm: x\n");
  DecodeContext ctx("f.yaml");
  MappingReader root(RootField(ctx, *parsed.root), {"l", "m"});
  std::vector<Field> items = ReadList(root.Required("l"));
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].path, "l[1]");
  EXPECT_EQ(items[1].node->mark.column, 8);
  EXPECT_THAT(ReadList(root.Required("m")), IsEmpty());
  EXPECT_THAT(ReadList(root.Optional("n")), IsEmpty());
  EXPECT_THAT(DiagnosticStrings(ctx.TakeDiagnostics()),
              ElementsAre("f.yaml:2:4: m: must be a list, not a string"));
}

TEST(DecodeContextTest, CapsTheNumberOfDiagnostics) {
  DecodeContext ctx("f.yaml");
  for (int i = 0; i < 200; ++i) ctx.Error({i + 1, 1}, "p", "bad");
  EXPECT_TRUE(ctx.has_errors());
  Diagnostics diagnostics = ctx.TakeDiagnostics();
  ASSERT_EQ(diagnostics.size(), kMaxDiagnosticsPerFile + 1);
  EXPECT_EQ(diagnostics.back().ToString(), "f.yaml:51:1: too many errors; not reporting the rest");
}

}  // namespace
}  // namespace tr::core
