// The hostile-input corpus: every input ends in a clear, positioned error, without crashing,
// recursing deeply or blowing up memory. Small inputs are committed under tests/core/hostile/;
// big ones are generated here. No timing assertions: these tests only have to finish.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/observed_decode.h"
#include "core/profile_decode.h"
#include "core/strict_yaml.h"
#include "fmt/format.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using testing::ElementsAre;
using testing::ElementsAreArray;
using testing::SizeIs;
using testing::StartsWith;

constexpr std::string_view kHostilePath = "clusters/prod-eu-1.yaml";

std::vector<std::string> DecodeErrors(std::string_view content) {
  Decoded<ClusterProfile> decoded = DecodeClusterProfile(kHostilePath, content, {});
  EXPECT_FALSE(decoded.ok());
  return DiagnosticStrings(decoded.diagnostics);
}

std::string HostileAt(int line, int column, std::string_view path, std::string_view message) {
  if (path.empty()) return fmt::format("{}:{}:{}: {}", kHostilePath, line, column, message);
  return fmt::format("{}:{}:{}: {}: {}", kHostilePath, line, column, path, message);
}

std::string ReadCorpusFile(const std::string& name) {
  std::ifstream in(std::string(TR_SOURCE_DIR) + "/tests/core/hostile/" + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Every committed corpus file and exactly what decoding it must report.
const std::map<std::string, std::vector<std::string>>& Corpus() {
  static const auto* corpus = new std::map<std::string, std::vector<std::string>>{
      {"billion_laughs.yaml", {HostileAt(1, 4, "a", "anchors (&a) are not allowed")}},
      {"merge_key.yaml", {HostileAt(9, 9, "", "invalid YAML: the referenced anchor is not defined")}},
      {"python_tag.yaml",
       {HostileAt(4, 9, "metadata.name",
           "tags such as \"!!python/object/apply:os.system\" are not allowed; quote the value "
           "instead")}},
      {"include_tag.yaml",
       {HostileAt(4, 16, "spec.credentials",
           "tags such as \"!include\" are not allowed; quote the value instead")}},
      {"duplicate_spec.yaml", {HostileAt(6, 1, "spec", "duplicate key \"spec\" (first at line 4)")}},
      {"many_documents.yaml", {HostileAt(3, 1, "", "only one YAML document is allowed per file")}},
      {"complex_key.yaml", {HostileAt(2, 3, "", "mapping keys must be plain strings")}},
      {"overlong_utf8.yaml", {HostileAt(2, 14, "", "invalid UTF-8: overlong encoding")}},
      {"surrogate_utf8.yaml", {HostileAt(3, 19, "", "invalid UTF-8: encoded surrogate")}},
      {"nul_byte.yaml", {HostileAt(2, 21, "", "NUL byte is not allowed")}},
      {"utf16.yaml", {HostileAt(1, 1, "", "invalid UTF-8: byte can never appear in UTF-8")}},
      {"terminal_escape.yaml", {HostileAt(3, 23, "", "control character U+001B is not allowed")}},
      // yaml-cpp ends an unterminated quoted scalar at the end of the input; the value that
      // results is still refused.
      {"unterminated_quote.yaml",
       {HostileAt(1, 1, "kind", "is required"), HostileAt(1, 1, "metadata", "is required"),
        HostileAt(1, 1, "spec", "is required"),
        HostileAt(1, 13, "apiVersion", "must be talos-reconciler.dev/v1alpha1")}},
      {"type_confusion.yaml",
       {HostileAt(3, 11, "metadata", "must be a mapping, not a list"),
        HostileAt(5, 14, "spec.endpoints", "must be a list, not a string"),
        HostileAt(6, 16, "spec.credentials", "must be a string, not a mapping"),
        HostileAt(7, 20, "spec.talos.version", "invalid Talos version \"1.12\": want MAJOR.MINOR.PATCH"),
        HostileAt(7, 33, "spec.talos.image", "must be a string, not a list"),
        HostileAt(8, 25, "spec.kubernetes.version",
           "must be a Kubernetes version such as 1.35.0, not a mapping"),
        HostileAt(9, 10, "spec.nodes", "must be a list, not a string"),
        HostileAt(10, 32, "spec.policy.maxParallelWorkers", "must be a whole number, without quotes"),
        HostileAt(10, 45, "spec.policy.paused", "must be true or false, without quotes"),
        HostileAt(10, 65, "spec.policy.etcdSnapshot", "must be true or false"),
        HostileAt(10, 76, "spec.policy.settle",
           "invalid duration \"30\": missing unit: write s, m or h after the number, e.g. 30s")}},
  };
  return *corpus;
}

class HostileCorpusTest : public testing::TestWithParam<std::string> {};

TEST_P(HostileCorpusTest, EndsInTheExpectedError) {
  const std::string content = ReadCorpusFile(GetParam());
  ASSERT_FALSE(content.empty()) << GetParam();
  EXPECT_THAT(DecodeErrors(content), ElementsAreArray(Corpus().at(GetParam())));
}

std::vector<std::string> CorpusNames() {
  std::vector<std::string> names;
  for (const auto& [name, expected] : Corpus()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Files, HostileCorpusTest, testing::ValuesIn(CorpusNames()),
                         [](const testing::TestParamInfo<std::string>& param_info) {
                           std::string name =
                               param_info.param.substr(0, param_info.param.find('.'));
                           return name;
                         });

TEST(HostileCorpusTest, EveryCommittedFileHasAnExpectation) {
  const std::filesystem::path dir = std::filesystem::path(TR_SOURCE_DIR) / "tests/core/hostile";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_TRUE(Corpus().contains(entry.path().filename().string())) << entry.path();
  }
  EXPECT_EQ(files, Corpus().size());
}

std::string Repeat(std::string_view unit, size_t times) {
  std::string out;
  out.reserve(unit.size() * times);
  for (size_t i = 0; i < times; ++i) out += unit;
  return out;
}

std::string DepthPath(int depth, std::string_view step) {
  std::string path;
  for (int i = 0; i < depth; ++i) path += step;
  return path;
}

TEST(HostileGeneratedTest, HundredThousandOpenBrackets) {
  // yaml-cpp reads flow collections left open at the end of the input as the implicit key of
  // a mapping; a collection as a key is refused before anything nests.
  EXPECT_THAT(DecodeErrors(std::string(100000, '[')),
              ElementsAre(HostileAt(1, 1, "", "mapping keys must be plain strings")));
  EXPECT_THAT(DecodeErrors("a: " + std::string(100000, '[')),
              ElementsAre(HostileAt(1, 5, "a[0]", "mapping keys must be plain strings")));
}

TEST(HostileGeneratedTest, HundredThousandBalancedBrackets) {
  EXPECT_THAT(DecodeErrors(std::string(100000, '[') + std::string(100000, ']')),
              ElementsAre(HostileAt(1, 65, DepthPath(64, "[0]"), "nesting is deeper than 64 levels")));
  EXPECT_THAT(
      DecodeErrors("a: " + std::string(100000, '[') + std::string(100000, ']')),
      ElementsAre(HostileAt(1, 67, "a" + DepthPath(63, "[0]"), "nesting is deeper than 64 levels")));
}

TEST(HostileGeneratedTest, HundredThousandOpenBraces) {
  EXPECT_THAT(DecodeErrors(std::string(100000, '{')),
              ElementsAre(HostileAt(1, 1, "", "mapping keys must be plain strings")));
}

TEST(HostileGeneratedTest, DeepFlowMappings) {
  // The root mapping is level 1; the 64th "{a: " opens level 65 at column 4 + 63 * 4.
  EXPECT_THAT(
      DecodeErrors("a: " + Repeat("{a: ", 100000)),
      ElementsAre(HostileAt(1, 256, DepthPath(64, ".a").substr(1), "nesting is deeper than 64 levels")));
}

TEST(HostileGeneratedTest, DeepMixedFlowCollections) {
  const std::string text = Repeat("[{a: ", 50000) + "x" + Repeat("}]", 50000);
  // Level 65 is the 33rd "[", after 32 units of 5 characters.
  EXPECT_THAT(DecodeErrors(text),
              ElementsAre(HostileAt(1, 161, DepthPath(32, "[0].a"), "nesting is deeper than 64 levels")));
}

TEST(HostileGeneratedTest, DeepBlockSequences) {
  EXPECT_THAT(DecodeErrors(Repeat("- ", 100000) + "x\n"),
              ElementsAre(HostileAt(1, 129, DepthPath(64, "[0]"), "nesting is deeper than 64 levels")));
}

TEST(HostileGeneratedTest, DeepBlockMappings) {
  std::string text;
  for (int depth = 0; depth < 300; ++depth) text += std::string(depth, ' ') + "a:\n";
  EXPECT_THAT(DecodeErrors(text), ElementsAre(HostileAt(65, 65, DepthPath(64, ".a").substr(1),
                                                 "nesting is deeper than 64 levels")));
}

TEST(HostileGeneratedTest, OneByteOverTheSizeCap) {
  std::string text = "apiVersion: talos-reconciler.dev/v1alpha1\n# ";
  text += std::string(kMaxYamlBytes + 1 - text.size(), 'x');
  ASSERT_EQ(text.size(), kMaxYamlBytes + 1);
  EXPECT_THAT(DecodeErrors(text), ElementsAre(std::string(kHostilePath) + ": file is larger than 1 MiB"));
}

TEST(HostileGeneratedTest, HugeScalarsAreNotEchoedInFull) {
  const std::string huge(kMaxYamlBytes - 100, '9');
  std::vector<std::string> errors = DecodeErrors("apiVersion: " + huge + "\n");
  ASSERT_THAT(errors, SizeIs(4));
  EXPECT_EQ(errors[3], HostileAt(1, 13, "apiVersion", "must be talos-reconciler.dev/v1alpha1"));
  // A huge value inside a message is cut.
  errors = DecodeErrors("spec: {talos: {version: " + huge + "}}\n");
  std::string version_error;
  for (const std::string& e : errors) {
    if (e.find("spec.talos.version") != std::string::npos) version_error = e;
  }
  EXPECT_THAT(version_error,
              StartsWith(HostileAt(1, 25, "spec.talos.version", "invalid Talos version \"9999")));
  EXPECT_LT(version_error.size(), 600u);
  // A plain key longer than 1024 characters is not a key at all (YAML's limit).
  EXPECT_THAT(DecodeErrors(std::string(kMaxYamlBytes - 100, 'k') + ": 1\n"),
              ElementsAre(HostileAt(1, 1048477, "", "invalid YAML: illegal map value")));
  // An explicit key has no such limit; the path and the message quoting it are cut.
  errors = DecodeErrors("? " + std::string(kMaxYamlBytes - 100, 'k') + "\n: 1\n");
  ASSERT_THAT(errors, SizeIs(5));
  EXPECT_EQ(errors[0], HostileAt(1, 1, "apiVersion", "is required"));
  EXPECT_THAT(errors[4], StartsWith(std::string(kHostilePath) + ":1:3: kkkk"));
  EXPECT_LT(errors[4].size(), 1000u);
}

TEST(HostileGeneratedTest, ManyDocuments) {
  EXPECT_THAT(DecodeErrors(Repeat("a: 1\n---\n", 100000)),
              ElementsAre(HostileAt(2, 1, "", "only one YAML document is allowed per file")));
}

TEST(HostileGeneratedTest, ManyUnknownKeysAreCapped) {
  std::string text;
  for (int i = 0; i < 60000; ++i) text += fmt::format("k{}: 1\n", i);
  std::vector<std::string> errors = DecodeErrors(text);
  ASSERT_THAT(errors, SizeIs(kMaxDiagnosticsPerFile + 1));
  EXPECT_EQ(errors[0], HostileAt(1, 1, "k0", "unknown key \"k0\""));
  EXPECT_EQ(errors.back(), HostileAt(51, 1, "", "too many errors; not reporting the rest"));
}

TEST(HostileGeneratedTest, ManyDuplicateKeysAreCapped) {
  std::vector<std::string> errors = DecodeErrors(Repeat("a: 1\n", 100000));
  ASSERT_THAT(errors, SizeIs(kMaxDiagnosticsPerFile));
  EXPECT_EQ(errors[0], HostileAt(2, 1, "a", "duplicate key \"a\" (first at line 1)"));
  EXPECT_EQ(errors.back(), HostileAt(51, 4, "", "too many errors; stopping here"));
}

TEST(HostileGeneratedTest, AFlatListOfAMegabyte) {
  std::string text = "[" + Repeat("a, ", (kMaxYamlBytes - 10) / 3) + "a]";
  EXPECT_THAT(DecodeErrors(text), ElementsAre(HostileAt(1, 1, "", "must be a mapping, not a list")));
}

TEST(HostileGeneratedTest, ManyEndpointsAreCapped) {
  std::string text = "spec:\n  endpoints: [" + Repeat("10.0.0.1, ", 50000) + "10.0.0.1]\n";
  std::vector<std::string> errors = DecodeErrors(text);
  EXPECT_THAT(errors, SizeIs(kMaxDiagnosticsPerFile + 1));
}

TEST(HostileGeneratedTest, RandomBinaryIsRefusedAsText) {
  std::string bytes;
  uint32_t state = 12345;
  for (int i = 0; i < 4096; ++i) {
    state = state * 1103515245u + 12345u;
    bytes.push_back(static_cast<char>(state >> 24));
  }
  std::vector<std::string> errors = DecodeErrors(bytes);
  ASSERT_THAT(errors, SizeIs(1));
  EXPECT_THAT(errors[0], StartsWith(std::string(kHostilePath) + ":1:"));
}

TEST(HostileGeneratedTest, TheObservedFileReaderIsJustAsStrict) {
  Decoded<ObservedFleet> decoded =
      DecodeObservedFleet("observed.yaml", std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_FALSE(decoded.ok());
  EXPECT_THAT(DiagnosticStrings(decoded.diagnostics),
              ElementsAre("observed.yaml:1:65: " + DepthPath(64, "[0]") +
                          ": nesting is deeper than 64 levels"));
  decoded = DecodeObservedFleet("observed.yaml", ReadCorpusFile("billion_laughs.yaml"));
  EXPECT_THAT(DiagnosticStrings(decoded.diagnostics),
              ElementsAre("observed.yaml:1:4: a: anchors (&a) are not allowed"));
}

}  // namespace
}  // namespace tr::core
