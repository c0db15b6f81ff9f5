#include "core/profile_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fmt/format.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using testing::ElementsAre;
using testing::IsEmpty;

std::string Profile(std::string_view name, std::string_view policy = "") {
  return fmt::format(R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata: {{name: {0}}}
spec:
  endpoints: [10.0.0.11]
  credentials: {0}
  talos: {{version: 1.11.6, image: ghcr.io/siderolabs/installer}}
  kubernetes: {{version: 1.34.1}}
  nodes:
    - {{name: cp-0, address: 10.0.0.11, role: controlplane}}
{1})",
                     name, policy);
}

constexpr std::string_view kDefaults = R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: RepositoryDefaults
policy: {settle: 2m, maxParallelWorkers: 2, paused: true}
supportMatrix:
  - {talos: 1.16, kubernetes: {min: 1.34, max: 1.39}, minimumUpgradeFrom: 1.14.0}
  - {talos: 1.12, kubernetes: {min: 1.30, max: 1.36}, minimumUpgradeFrom: 1.10.0}
releases: {talos: [1.16.1, 1.11.9], kubernetes: [1.39.2, 1.34.0]}
)";

SourceFile File(std::string path, std::string content) {
  return SourceFile{.path = std::move(path), .content = std::move(content), .oversized = false};
}

TEST(ProfileSetTest, MergesDefaultsUnderEveryProfileAndExtendsTheCatalogs) {
  ProfileSet set = DecodeProfileSet({
      File("clusters/zeta.yaml", Profile("zeta", "  policy: {settle: 5s}\n")),
      File("clusters/alpha.yaml", Profile("alpha")),
      File("reconciler.yaml", std::string(kDefaults)),  // order in the list does not matter
  });
  EXPECT_THAT(set.defaults_diagnostics, IsEmpty());
  EXPECT_THAT(set.invalid, IsEmpty());
  ASSERT_EQ(set.profiles.size(), 2u);
  EXPECT_EQ(set.profiles[0].name, "alpha");  // sorted by name
  EXPECT_EQ(set.profiles[1].name, "zeta");
  EXPECT_EQ(set.profiles[0].policy.settle, minutes(2));  // reconciler.yaml
  EXPECT_EQ(set.profiles[1].policy.settle, seconds(5));  // the profile's own
  EXPECT_EQ(set.profiles[1].policy.max_parallel_workers, 2);
  EXPECT_TRUE(set.profiles[1].policy.paused);
  EXPECT_EQ(set.profiles[1].policy.node_timeout, minutes(30));  // built in
  EXPECT_EQ(set.defaults.policy.settle, minutes(2));

  // Built-in rows stay; reconciler.yaml adds 1.16 and replaces 1.12.
  ASSERT_TRUE(set.support_matrix.Find({1, 16}).has_value());
  EXPECT_EQ(set.support_matrix.Find({1, 16})->kubernetes_max, (MinorVersion{1, 39}));
  EXPECT_EQ(set.support_matrix.Find({1, 12})->kubernetes_min, (MinorVersion{1, 30}));
  EXPECT_EQ(set.support_matrix.Find({1, 12})->kubernetes_max, (MinorVersion{1, 36}));
  EXPECT_EQ(set.support_matrix.Find({1, 11})->kubernetes_max, (MinorVersion{1, 34}));
  // Releases: newer patches replace, older ones do not.
  EXPECT_EQ(set.release_catalog.LatestTalos({1, 16})->ToString(), "1.16.1");
  EXPECT_EQ(set.release_catalog.LatestTalos({1, 11})->ToString(), "1.11.9");
  EXPECT_EQ(set.release_catalog.LatestKubernetes({1, 39})->ToString(), "1.39.2");
  EXPECT_EQ(set.release_catalog.LatestKubernetes({1, 34})->ToString(), "1.34.1");
}

TEST(ProfileSetTest, ABrokenProfileNeverStopsTheOthers) {
  ProfileSet set = DecodeProfileSet({
      File("clusters/good.yaml", Profile("good")),
      File("clusters/bad.yaml", Profile("wrong-name")),
      File("clusters/empty.yaml", ""),
  });
  ASSERT_EQ(set.profiles.size(), 1u);
  EXPECT_EQ(set.profiles[0].name, "good");
  EXPECT_EQ(set.profiles[0].policy.settle, seconds(30));  // no reconciler.yaml: built in
  ASSERT_EQ(set.invalid.size(), 2u);
  EXPECT_EQ(set.invalid[0].file, "clusters/bad.yaml");  // sorted by file
  EXPECT_EQ(set.invalid[0].cluster, "bad");
  EXPECT_THAT(DiagnosticStrings(set.invalid[0].diagnostics),
              ElementsAre("clusters/bad.yaml:3:18: metadata.name: must match the file name: "
                          "\"bad\" (clusters/bad.yaml)"));
  EXPECT_EQ(set.invalid[1].cluster, "empty");
  EXPECT_THAT(DiagnosticStrings(set.invalid[1].diagnostics),
              ElementsAre("clusters/empty.yaml:1:1: file is empty"));
}

TEST(ProfileSetTest, FindsAValidProfileByNameAndNoInvalidOne) {
  ProfileSet set = DecodeProfileSet({
      File("clusters/mid.yaml", Profile("mid")),
      File("clusters/zeta.yaml", Profile("zeta")),
      File("clusters/alpha.yaml", Profile("alpha")),
      File("clusters/bad.yaml", Profile("wrong-name")),
  });
  ASSERT_EQ(set.profiles.size(), 3u);
  for (const std::string name : {"alpha", "mid", "zeta"}) {
    const ClusterProfile* found = set.Find(name);
    ASSERT_NE(found, nullptr) << name;
    EXPECT_EQ(found->name, name);
  }
  EXPECT_EQ(set.Find("bad"), nullptr);  // invalid: known, but not a profile to act on
  EXPECT_TRUE(set.Knows("bad"));
  EXPECT_EQ(set.Find("beta"), nullptr);  // between two names
  EXPECT_EQ(set.Find("zzz"), nullptr);   // after the last
  EXPECT_EQ(set.Find(""), nullptr);      // before the first
  EXPECT_EQ(set.Find("alph"), nullptr);  // a prefix of one
}

TEST(ProfileSetTest, ABrokenReconcilerYamlMakesEveryProfileInvalid) {
  ProfileSet set = DecodeProfileSet({
      File("reconciler.yaml",
           "apiVersion: talos-reconciler.dev/v1alpha1\nkind: "
           "RepositoryDefaults\npolicy: {paused: maybe}\n"),
      File("clusters/good.yaml", Profile("good")),
      File("clusters/bad.yaml", Profile("bad", "  policy: {onFailure: explode}\n")),
  });
  EXPECT_THAT(DiagnosticStrings(set.defaults_diagnostics),
              ElementsAre("reconciler.yaml:3:18: policy.paused: must be true or false"));
  EXPECT_THAT(set.profiles, IsEmpty());
  ASSERT_EQ(set.invalid.size(), 2u);
  EXPECT_THAT(DiagnosticStrings(set.invalid[0].diagnostics),
              ElementsAre("clusters/bad.yaml: reconciler.yaml is invalid; no profile is acted on "
                          "until it is fixed",
                          "clusters/bad.yaml:11:23: spec.policy.onFailure: must be halt or "
                          "rollback"));
  EXPECT_THAT(DiagnosticStrings(set.invalid[1].diagnostics),
              ElementsAre("clusters/good.yaml: reconciler.yaml is invalid; no profile is acted "
                          "on until it is fixed"));
  // Only the built-in catalogs apply.
  EXPECT_FALSE(set.support_matrix.Find({1, 16}).has_value());
  EXPECT_TRUE(set.support_matrix.Find({1, 15}).has_value());
}

TEST(ProfileSetTest, IgnoresOtherPathsAndFlagsYml) {
  ProfileSet set = DecodeProfileSet({
      File("README.md", "# not yaml: ["),
      File("clusters/sub/x.yaml", "not: [valid"),
      File("clusters/notes.txt", "["),
      File("other/x.yaml", "["),
      File("clusters.yaml", "["),
      File("status/x.yaml", "["),
      File("clusters/old.yml", Profile("old")),
  });
  EXPECT_THAT(set.profiles, IsEmpty());
  ASSERT_EQ(set.invalid.size(), 1u);
  EXPECT_EQ(set.invalid[0].cluster, "old");
  EXPECT_THAT(DiagnosticStrings(set.invalid[0].diagnostics),
              ElementsAre("clusters/old.yml: profiles must be named clusters/<name>.yaml, not "
                          ".yml"));
}

TEST(ProfileSetTest, OversizedFilesAreRefusedWithoutReading) {
  SourceFile big = File("clusters/big.yaml", "");
  big.oversized = true;
  SourceFile big_defaults = File("reconciler.yaml", "");
  big_defaults.oversized = true;
  ProfileSet set = DecodeProfileSet({big});
  ASSERT_EQ(set.invalid.size(), 1u);
  EXPECT_THAT(DiagnosticStrings(set.invalid[0].diagnostics),
              ElementsAre("clusters/big.yaml: file is larger than 1 MiB"));
  set = DecodeProfileSet({big_defaults});
  EXPECT_THAT(DiagnosticStrings(set.defaults_diagnostics),
              ElementsAre("reconciler.yaml: file is larger than 1 MiB"));
}

TEST(ProfileSetTest, PassesTheTimeZoneCheckThrough) {
  ValidationOptions options;
  options.is_known_timezone = [](std::string_view name) { return name == "UTC"; };
  ProfileSet set = DecodeProfileSet(
      {File("clusters/a.yaml",
            Profile("a",
                    "  policy:\n    windows: [{days: [Sun], start: \"03:00\", duration: 1h, "
                    "timezone: Europe/Nowhere}]\n"))},
      options);
  ASSERT_EQ(set.invalid.size(), 1u);
  EXPECT_THAT(DiagnosticStrings(set.invalid[0].diagnostics),
              ElementsAre("clusters/a.yaml:12:69: spec.policy.windows[0].timezone: unknown time "
                          "zone \"Europe/Nowhere\""));
}

TEST(ProfileSetTest, NoFilesIsAnEmptySetWithTheBuiltIns) {
  ProfileSet set = DecodeProfileSet({});
  EXPECT_THAT(set.profiles, IsEmpty());
  EXPECT_THAT(set.invalid, IsEmpty());
  EXPECT_TRUE(set.support_matrix.Find({1, 11}).has_value());
  EXPECT_TRUE(set.release_catalog.LatestTalos({1, 11}).has_value());
}

}  // namespace
}  // namespace tr::core
