#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/repository_defaults_decode.h"
#include "fmt/format.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using std::chrono::minutes;
using testing::ElementsAre;
using testing::ElementsAreArray;
using testing::IsEmpty;

constexpr std::string_view kRepositoryDefaults = R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: RepositoryDefaults
policy:
  nodeTimeout: 45m
  windows:
    - {days: [Sat], start: "01:00", duration: 6h, timezone: UTC}
supportMatrix:
  - talos: 1.16
    kubernetes: {min: 1.34, max: 1.39}
    minimumUpgradeFrom: 1.14.0
  - {talos: "1.10", kubernetes: {min: "1.28", max: "1.34"}, minimumUpgradeFrom: v1.8.0}
releases:
  talos: [1.16.1, 1.15.3]
  kubernetes: [1.39.2]
)";

Decoded<RepositoryDefaults> DecodeDefaults(std::string_view text) {
  return DecodeRepositoryDefaults("reconciler.yaml", text);
}

std::string DefaultsAt(int line, int column, std::string_view path, std::string_view message) {
  return fmt::format("reconciler.yaml:{}:{}: {}: {}", line, column, path, message);
}

TEST(RepositoryDefaultsTest, DecodesEverySection) {
  Decoded<RepositoryDefaults> decoded = DecodeDefaults(kRepositoryDefaults);
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  const RepositoryDefaults& d = *decoded.value;
  EXPECT_EQ(d.policy.node_timeout, minutes(45));
  ASSERT_TRUE(d.policy.windows.has_value());
  EXPECT_EQ((*d.policy.windows)[0].duration, minutes(360));
  EXPECT_FALSE(d.policy.settle.has_value());
  ASSERT_EQ(d.support_matrix.size(), 2u);
  EXPECT_EQ(d.support_matrix[0].talos, (MinorVersion{1, 16}));
  EXPECT_EQ(d.support_matrix[0].kubernetes_min, (MinorVersion{1, 34}));
  EXPECT_EQ(d.support_matrix[0].kubernetes_max, (MinorVersion{1, 39}));
  EXPECT_EQ(d.support_matrix[0].minimum_upgrade_from.ToString(), "1.14.0");
  // "1.10" stays the text "1.10", quoted or not: no float rounding to 1.1.
  EXPECT_EQ(d.support_matrix[1].talos, (MinorVersion{1, 10}));
  ASSERT_EQ(d.talos_releases.size(), 2u);
  EXPECT_EQ(d.talos_releases[0].ToString(), "1.16.1");
  ASSERT_EQ(d.kubernetes_releases.size(), 1u);
  EXPECT_EQ(d.kubernetes_releases[0].ToString(), "1.39.2");
}

TEST(RepositoryDefaultsTest, OnlyTheHeaderIsRequired) {
  Decoded<RepositoryDefaults> decoded =
      DecodeDefaults("apiVersion: talos-reconciler.dev/v1alpha1\nkind: RepositoryDefaults\n");
  ASSERT_TRUE(decoded.ok());
  EXPECT_THAT(decoded.value->support_matrix, IsEmpty());
  EXPECT_FALSE(decoded.value->policy.node_timeout.has_value());
}

TEST(RepositoryDefaultsTest, SetsADrainPolicyForEveryProfile) {
  const std::string text = ReplaceOnce(kRepositoryDefaults, "  nodeTimeout: 45m\n",
                                       "  nodeTimeout: 45m\n  drain: {onTimeout: force}\n");
  ASSERT_FALSE(text.empty());
  Decoded<RepositoryDefaults> decoded = DecodeDefaults(text);
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  EXPECT_EQ(decoded.value->policy.drain_on_timeout, DrainTimeoutAction::kForce);
  EXPECT_FALSE(decoded.value->policy.drain_timeout.has_value());
}

struct DefaultsCase {
  std::string name;
  std::string from;
  std::string to;
  std::vector<std::string> diagnostics;
};

class RepositoryDefaultsRuleTest : public testing::TestWithParam<DefaultsCase> {};

TEST_P(RepositoryDefaultsRuleTest, ReportsExactly) {
  const DefaultsCase& c = GetParam();
  const std::string text = ReplaceOnce(kRepositoryDefaults, c.from, c.to);
  ASSERT_FALSE(text.empty()) << c.from;
  Decoded<RepositoryDefaults> decoded = DecodeDefaults(text);
  EXPECT_FALSE(decoded.ok());
  EXPECT_THAT(DiagnosticStrings(decoded.diagnostics), ElementsAreArray(c.diagnostics));
}

const DefaultsCase kCases[] = {
    {"WrongKind",
     "kind: RepositoryDefaults",
     "kind: ClusterProfile",
     {DefaultsAt(2, 7, "kind", "must be RepositoryDefaults")}},
    {"UnknownKey",
     "releases:\n",
     "release:\n",
     {DefaultsAt(12, 1, "release", "unknown key \"release\" (did you mean \"releases\"?)")}},
    {"PolicyTypo",
     "  nodeTimeout: 45m",
     "  nodeTimeout: 45",
     {DefaultsAt(4, 16, "policy.nodeTimeout",
         "invalid duration \"45\": missing unit: write s, m or h after the number, e.g. 30s")}},
    {"DrainTimeoutNotADuration",
     "  nodeTimeout: 45m\n",
     "  nodeTimeout: 45m\n  drain:\n    timeout: soon\n",
     {DefaultsAt(6, 14, "policy.drain.timeout",
         "invalid duration \"soon\": want <number><unit> parts such as 30s, 10m, 1h30m")}},
    {"MatrixTalosPatch",
     "  - talos: 1.16\n",
     "  - talos: 1.16.0\n",
     {DefaultsAt(8, 12, "supportMatrix[0].talos", "invalid minor version \"1.16.0\": want MAJOR.MINOR")}},
    {"MatrixRangeBackwards",
     "{min: 1.34, max: 1.39}",
     "{min: 1.39, max: 1.34}",
     {DefaultsAt(9, 34, "supportMatrix[0].kubernetes.max", "must not be older than min (1.39)")}},
    {"MatrixMissingRange",
     "    kubernetes: {min: 1.34, max: 1.39}\n",
     "",
     {DefaultsAt(8, 5, "supportMatrix[0].kubernetes", "is required")}},
    {"MatrixUpgradeFromNewer",
     "minimumUpgradeFrom: 1.14.0",
     "minimumUpgradeFrom: 1.16.0",
     {DefaultsAt(10, 25, "supportMatrix[0].minimumUpgradeFrom", "must be older than Talos 1.16")}},
    {"MatrixDuplicateRow",
     "{talos: \"1.10\"",
     "{talos: \"1.16\"",
     {DefaultsAt(11, 5, "supportMatrix[1]", "Talos 1.16 already has a row at supportMatrix[0]")}},
    {"MatrixNotList",
     "supportMatrix:\n",
     "supportMatrix: {}\nx:\n",
     {DefaultsAt(7, 16, "supportMatrix", "must be a list, not a mapping"),
      DefaultsAt(8, 1, "x", "unknown key \"x\"")}},
    {"ReleasePrerelease",
     "[1.16.1, 1.15.3]",
     "[1.16.1, 1.17.0-beta.0]",
     {DefaultsAt(13, 19, "releases.talos[1]",
         "must be a release version (no prerelease or build suffix)")}},
    {"ReleaseBad",
     "[1.39.2]",
     "[1.39]",
     {DefaultsAt(14, 16, "releases.kubernetes[0]",
         "invalid Kubernetes version \"1.39\": want MAJOR.MINOR.PATCH")}},
    {"ReleasesUnknownKey",
     "  kubernetes: [1.39.2]\n",
     "  kubernetes: [1.39.2]\n  k8s: []\n",
     {DefaultsAt(15, 3, "releases.k8s", "unknown key \"k8s\"")}},
};

INSTANTIATE_TEST_SUITE_P(Cases, RepositoryDefaultsRuleTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<DefaultsCase>& param_info) {
                           return param_info.param.name;
                         });

TEST(RepositoryDefaultsTest, RefusesHostileYamlToo) {
  EXPECT_THAT(DiagnosticStrings(DecodeDefaults("a: &x [1]\nb: *x\n").diagnostics),
              ElementsAre("reconciler.yaml:1:4: a: anchors (&x) are not allowed"));
  EXPECT_THAT(DiagnosticStrings(DecodeDefaults("").diagnostics),
              ElementsAre("reconciler.yaml:1:1: file is empty"));
}

}  // namespace
}  // namespace tr::core
