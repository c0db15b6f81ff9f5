#include "core/profile_edit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tr::core {
namespace {

using testing::HasSubstr;

Version Ver(std::string_view text) { return *ParseKubernetesVersion(text); }

TEST(ProfileEditTest, OnlyTheVersionBytesChange) {
  const std::string before = R"(# prod: keep this comment
apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: prod
spec:
  talos:
    version: 1.12.0   # pinned by the platform team
    image: ghcr.io/siderolabs/installer
  kubernetes: {version: "1.34.1"}
  nodes: []
)";
  const absl::StatusOr<std::string> after =
      SetProfileVersions(before, Ver("1.12.3"), Ver("1.34.3"));
  ASSERT_TRUE(after.ok()) << after.status();
  std::string expected = before;
  expected.replace(expected.find("1.12.0"), 6, "1.12.3");
  expected.replace(expected.find("1.34.1"), 6, "1.34.3");
  EXPECT_EQ(*after, expected);
}

TEST(ProfileEditTest, FlowStyleSingleQuotesAndALeadingVAreKept) {
  const std::string before =
      "spec:\n  talos: {version: v1.11.6, image: x}\n  kubernetes:\n    version: '1.33.6'\n";
  EXPECT_EQ(*SetProfileVersions(before, Ver("1.12.4"), std::nullopt),
            "spec:\n  talos: {version: v1.12.4, image: x}\n  kubernetes:\n    version: '1.33.6'\n");
  EXPECT_EQ(*SetProfileVersions(before, std::nullopt, Ver("1.34.3")),
            "spec:\n  talos: {version: v1.11.6, image: x}\n  kubernetes:\n    version: '1.34.3'\n");
  EXPECT_EQ(*SetProfileVersions(before, std::nullopt, std::nullopt), before);
}

TEST(ProfileEditTest, AFileWithoutTheVersionIsRefused) {
  absl::StatusOr<std::string> out =
      SetProfileVersions("spec:\n  talos: {image: x}\n", Ver("1.12.4"), std::nullopt);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("spec.talos.version"));
  EXPECT_FALSE(SetProfileVersions("spec: [", Ver("1.12.4"), std::nullopt).ok());
  EXPECT_FALSE(
      SetProfileVersions("spec:\n  talos:\n    version: [1]\n", Ver("1.12.4"), std::nullopt).ok());
}

TEST(ProfileEditTest, PausedIsSetInPlaceOrAddedIndentedAsItsNeighbours) {
  const std::string with_policy =
      "spec:\n  talos: {version: 1.12.0}\n  policy:\n    settle: 5s   # keep\n";
  EXPECT_EQ(*SetProfilePaused(with_policy, true),
            "spec:\n  talos: {version: 1.12.0}\n  policy:\n    paused: true\n    settle: 5s   # keep\n");
  const std::string paused = *SetProfilePaused(with_policy, true);
  EXPECT_EQ(*SetProfilePaused(paused, false),
            "spec:\n  talos: {version: 1.12.0}\n  policy:\n    paused: false\n    settle: 5s   # keep\n");
  EXPECT_EQ(*SetProfilePaused(paused, true), paused);
  // No policy yet: one is added to spec, at spec's indentation.
  EXPECT_EQ(*SetProfilePaused("# c\nspec:\n    talos: {version: 1.12.0}\n", true),
            "# c\nspec:\n    policy:\n      paused: true\n    talos: {version: 1.12.0}\n");
  // Flow style is left to a person.
  EXPECT_FALSE(SetProfilePaused("spec:\n  policy: {settle: 5s}\n", true).ok());
  EXPECT_FALSE(SetProfilePaused("spec: {policy: {}}\n", true).ok());
}

// The retry token: an annotation added under metadata (with `annotations:` when there is none),
// then replaced in place, quotes kept; anyone else's annotations and comments stay.
TEST(ProfileEditTest, RetryTokenIsAddedAsAnAnnotationThenReplacedInPlace) {
  const std::string bare = "metadata:\n  name: lab   # ours\nspec: {}\n";
  const std::string first = *SetProfileRetry(bare, "2026-12-02T10:00:00Z");
  EXPECT_EQ(first,
            "metadata:\n  annotations:\n    talos-reconciler.dev/retry: \"2026-12-02T10:00:00Z\"\n"
            "  name: lab   # ours\nspec: {}\n");
  EXPECT_EQ(*SetProfileRetry(first, "2026-12-02T11:00:00Z"),
            "metadata:\n  annotations:\n    talos-reconciler.dev/retry: \"2026-12-02T11:00:00Z\"\n"
            "  name: lab   # ours\nspec: {}\n");
  const std::string others = "metadata:\n  name: lab\n  annotations:\n    team: infra\n";
  EXPECT_EQ(*SetProfileRetry(others, "1"),
            "metadata:\n  name: lab\n  annotations:\n    talos-reconciler.dev/retry: \"1\"\n"
            "    team: infra\n");
  EXPECT_FALSE(SetProfileRetry("metadata: {name: lab}\n", "1").ok());
  // A token written with escapes is left to a person rather than rewritten wrongly.
  absl::StatusOr<std::string> escaped = SetProfileRetry(
      "metadata:\n  annotations:\n    talos-reconciler.dev/retry: \"a\\tb\"\n", "1");
  ASSERT_FALSE(escaped.ok());
  EXPECT_THAT(std::string(escaped.status().message()),
              testing::HasSubstr("set metadata.annotations.talos-reconciler.dev/retry: \"1\" by hand"));
}

}  // namespace
}  // namespace tr::core
