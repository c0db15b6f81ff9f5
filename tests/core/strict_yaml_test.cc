#include "core/strict_yaml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using testing::ElementsAre;

TEST(StrictYamlTest, BuildsATreeWithPositionsAndUntypedText) {
  ParsedYaml parsed = ParseStrictYaml("f.yaml",
                                      "version: 1.10\n"
                                      "quoted: \"1.10\"\n"
                                      "list:\n"
                                      "  - a\n"
                                      "  - {x: 'y', z: w}\n"
                                      "block: |\n"
                                      "  text\n"
                                      "empty:\n"
                                      "last: ~\n");
  ASSERT_TRUE(parsed.root.has_value())
      << testing::PrintToString(DiagnosticStrings(parsed.diagnostics));
  const YamlNode& root = *parsed.root;
  ASSERT_TRUE(root.IsMapping());
  ASSERT_EQ(root.entries.size(), 6u);
  EXPECT_EQ(root.entries[0].key, "version");
  EXPECT_EQ(root.entries[0].key_mark.line, 1);
  EXPECT_EQ(root.entries[0].key_mark.column, 1);
  const YamlNode* version = root.Find("version");
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(version->text, "1.10");
  EXPECT_TRUE(version->plain);
  EXPECT_EQ(version->mark.line, 1);
  EXPECT_EQ(version->mark.column, 10);
  EXPECT_EQ(root.Find("quoted")->text, "1.10");
  EXPECT_FALSE(root.Find("quoted")->plain);
  const YamlNode* list = root.Find("list");
  ASSERT_TRUE(list->IsSequence());
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0].text, "a");
  EXPECT_EQ(list->items[0].mark.line, 4);
  EXPECT_EQ(list->items[0].mark.column, 5);
  const YamlNode& flow = list->items[1];
  ASSERT_TRUE(flow.IsMapping());
  EXPECT_EQ(flow.mark.line, 5);
  EXPECT_EQ(flow.mark.column, 5);
  EXPECT_EQ(flow.Find("x")->text, "y");
  EXPECT_FALSE(flow.Find("x")->plain);
  EXPECT_EQ(root.Find("block")->text, "text\n");
  EXPECT_FALSE(root.Find("block")->plain);
  // An omitted value is null and points at its key, not at the next line.
  const YamlNode* empty = root.Find("empty");
  EXPECT_EQ(empty->kind, YamlNode::Kind::kNull);
  EXPECT_EQ(empty->mark.line, 8);
  EXPECT_EQ(empty->mark.column, 1);
  // yaml-cpp reports plain ~, null, Null and NULL as null.
  EXPECT_EQ(root.Find("last")->kind, YamlNode::Kind::kNull);
  EXPECT_EQ(root.Find("missing"), nullptr);
}

TEST(StrictYamlTest, AcceptsTheNonSpecificTagAsAString) {
  ParsedYaml parsed = ParseStrictYaml("f.yaml", "a: ! 5\n");
  ASSERT_TRUE(parsed.root.has_value());
  EXPECT_EQ(parsed.root->Find("a")->text, "5");
  EXPECT_FALSE(parsed.root->Find("a")->plain);
}

TEST(StrictYamlTest, AcceptsALeadingByteOrderMarkAndCrlf) {
  ParsedYaml parsed = ParseStrictYaml("f.yaml",
                                      "\xEF\xBB\xBF"
                                      "a: b\r\nc: d\r\n");
  ASSERT_TRUE(parsed.root.has_value());
  EXPECT_EQ(parsed.root->Find("c")->text, "d");
  EXPECT_EQ(parsed.root->Find("c")->mark.line, 2);
}

TEST(StrictYamlTest, NestingOfExactlyTheLimitIsAccepted) {
  const std::string text = std::string(kMaxYamlDepth, '[') + std::string(kMaxYamlDepth, ']');
  EXPECT_TRUE(ParseStrictYaml("f.yaml", text).root.has_value());
}

TEST(StrictYamlTest, ReportsEveryDuplicateKey) {
  ParsedYaml parsed = ParseStrictYaml("f.yaml",
                                      "a: 1\n"
                                      "b: {c: 1, c: 2}\n"
                                      "a: 3\n"
                                      "\"a\": 4\n");
  EXPECT_FALSE(parsed.root.has_value());
  EXPECT_THAT(DiagnosticStrings(parsed.diagnostics),
              ElementsAre("f.yaml:2:11: b.c: duplicate key \"c\" (first at line 2)",
                          "f.yaml:3:1: a: duplicate key \"a\" (first at line 1)",
                          "f.yaml:4:1: a: duplicate key \"a\" (first at line 1)"));
}

struct RefusalCase {
  std::string name;
  std::string text;
  std::string diagnostic;
};

class StrictYamlRefusalTest : public testing::TestWithParam<RefusalCase> {};

TEST_P(StrictYamlRefusalTest, RefusesWithOnePositionedDiagnostic) {
  const RefusalCase& c = GetParam();
  ParsedYaml parsed = ParseStrictYaml("f.yaml", c.text);
  EXPECT_FALSE(parsed.root.has_value());
  EXPECT_THAT(DiagnosticStrings(parsed.diagnostics), ElementsAre(c.diagnostic));
}

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }
std::string NestedPath(int depth) {
  std::string path;
  for (int i = 0; i < depth; ++i) path += "[0]";
  return path;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, StrictYamlRefusalTest,
    testing::Values(
        RefusalCase{"Empty", "", "f.yaml:1:1: file is empty"},
        RefusalCase{"OnlyComments", "# nothing here\n\n  # really\n", "f.yaml:1:1: file is empty"},
        RefusalCase{"OnlyDocumentMarker", "---\n", "f.yaml:1:1: file is empty"},
        RefusalCase{"Anchor", "a: &x 1\nb: *x\n", "f.yaml:1:4: a: anchors (&x) are not allowed"},
        RefusalCase{"AnchorOnMapping", "a:\n  b: &m {c: d}\n",
                    "f.yaml:2:6: a.b: anchors (&m) are not allowed"},
        RefusalCase{"AnchorInList", "a: [x, &y z]\n",
                    "f.yaml:1:8: a[1]: anchors (&y) are not allowed"},
        RefusalCase{"UndefinedAlias", "a: *x\n",
                    "f.yaml:1:4: invalid YAML: the referenced anchor is not defined"},
        RefusalCase{"CoreStrTag", "a: !!str 5\n",
                    "f.yaml:1:4: a: tags such as \"!!str\" are not allowed; quote the value "
                    "instead"},
        RefusalCase{"CoreIntTag", "a: [!!int 5]\n",
                    "f.yaml:1:5: a[0]: tags such as \"!!int\" are not allowed; quote the value "
                    "instead"},
        RefusalCase{"VerbatimTag", "a: !<tag:yaml.org,2002:str> z\n",
                    "f.yaml:1:4: a: tags such as \"!!str\" are not allowed; quote the value "
                    "instead"},
        RefusalCase{"LocalTag", "a: !foo bar\n",
                    "f.yaml:1:4: a: tags such as \"!foo\" are not allowed; quote the value "
                    "instead"},
        RefusalCase{"PythonTag", "a: !!python/object:os.system x\n",
                    "f.yaml:1:4: a: tags such as \"!!python/object:os.system\" are not allowed; "
                    "quote the value instead"},
        RefusalCase{"TaggedMapping", "a: !!map {b: c}\n",
                    "f.yaml:1:4: a: tags such as \"!!map\" are not allowed; quote the value "
                    "instead"},
        RefusalCase{"TagDirective", "%TAG !e! tag:example.com,2000:\n---\na: !e!foo x\n",
                    "f.yaml:3:4: a: tags such as \"tag:example.com,2000:foo\" are not allowed; "
                    "quote the value instead"},
        RefusalCase{"TwoDocuments", "a: 1\n---\nb: 2\n",
                    "f.yaml:2:1: only one YAML document is allowed per file"},
        RefusalCase{"TrailingEmptyDocument", "a: 1\n---\n",
                    "f.yaml:2:1: only one YAML document is allowed per file"},
        RefusalCase{"SequenceKey", "? [a]\n: b\n",
                    "f.yaml:1:3: mapping keys must be plain strings"},
        RefusalCase{"MappingKey", "x: {{a: b}: c}\n",
                    "f.yaml:1:5: x: mapping keys must be plain strings"},
        RefusalCase{"NullKey", "~: a\n", "f.yaml:1:1: mapping keys must be plain strings"},
        RefusalCase{"EmptyKey", "? \n: a\n", "f.yaml:2:1: mapping keys must be plain strings"},
        RefusalCase{
            "TooDeepFlow", Nested(kMaxYamlDepth + 1),
            "f.yaml:1:65: " + NestedPath(kMaxYamlDepth) + ": nesting is deeper than 64 levels"},
        RefusalCase{"SyntaxError", "a: b: c\n", "f.yaml:1:5: invalid YAML: illegal map value"},
        RefusalCase{"UnclosedFlow", "a: [b, c\n",
                    "f.yaml:2:1: invalid YAML: end of sequence flow not found"},
        RefusalCase{"Tab", "a: b\n\tc: d\n",
                    "f.yaml:2:1: invalid YAML: illegal tab when looking for indentation"},
        RefusalCase{"BadUtf8", "a: \xC0\xAF\n", "f.yaml:1:4: invalid UTF-8: overlong encoding"},
        RefusalCase{"Nul", std::string("a: \0\n", 5), "f.yaml:1:4: NUL byte is not allowed"},
        RefusalCase{"Oversized", std::string(kMaxYamlBytes + 1, '#'),
                    "f.yaml: file is larger than 1 MiB"}),
    [](const testing::TestParamInfo<RefusalCase>& param_info) { return param_info.param.name; });

TEST(StrictYamlTest, InputOfExactlyTheLimitIsParsed) {
  std::string text = "a: ";
  text += std::string(kMaxYamlBytes - text.size() - 1, 'x') + "\n";
  ASSERT_EQ(text.size(), kMaxYamlBytes);
  ParsedYaml parsed = ParseStrictYaml("f.yaml", text);
  ASSERT_TRUE(parsed.root.has_value());
  EXPECT_EQ(parsed.root->Find("a")->text.size(), kMaxYamlBytes - 4);
}

TEST(StrictYamlTest, StopsReportingDuplicatesAfterTheCap) {
  std::string text;
  for (size_t i = 0; i < kMaxDiagnosticsPerFile + 10; ++i) text += "a: 1\n";
  ParsedYaml parsed = ParseStrictYaml("f.yaml", text);
  ASSERT_EQ(parsed.diagnostics.size(), kMaxDiagnosticsPerFile);
  EXPECT_EQ(parsed.diagnostics.back().ToString(), "f.yaml:51:4: too many errors; stopping here");
}

TEST(JoinPathTest, QuotesUnusualKeys) {
  EXPECT_EQ(JoinPath("", "spec"), "spec");
  EXPECT_EQ(JoinPath("spec", "nodes"), "spec.nodes");
  EXPECT_EQ(JoinPath("spec.nodes", 2), "spec.nodes[2]");
  EXPECT_EQ(JoinPath("nodes", "cp-0.example.com"), "nodes.cp-0.example.com");
  EXPECT_EQ(JoinPath("a", "b c"), "a[\"b c\"]");
  EXPECT_EQ(JoinPath("a", ""), "a[\"\"]");
}

}  // namespace
}  // namespace tr::core
