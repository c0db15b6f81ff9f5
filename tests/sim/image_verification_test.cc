// The ImageVerificationConfig rules of a simulated node (tests/sim/catalog/image_verification.h), pinned
// to talos v1.14.0-rc.1: first match by rule index, go-glob patterns on the repository, the
// rule id as "%04d", and the denial's text.
#include "tests/sim/catalog/image_verification.h"

#include <gtest/gtest.h>

namespace tr::sim {
namespace {

TEST(ImageVerificationTest, GlobStarMatchesAnyRunSlashesIncluded) {
  EXPECT_TRUE(GlobMatch("factory.talos.dev/*", "factory.talos.dev/metal-installer/abc"));
  EXPECT_TRUE(GlobMatch("*/siderolabs/installer", "ghcr.io/siderolabs/installer"));
  EXPECT_TRUE(GlobMatch("ghcr.io/*/install*", "ghcr.io/siderolabs/installer"));
  EXPECT_TRUE(GlobMatch("*", "docker.io/library/alpine"));
  EXPECT_FALSE(GlobMatch("factory.talos.dev/*", "ghcr.io/siderolabs/installer"));
  EXPECT_FALSE(GlobMatch("ghcr.io/siderolabs/installer", "ghcr.io/siderolabs/installer2"));
  EXPECT_FALSE(GlobMatch("ghcr.io/*/kubelet", "ghcr.io/siderolabs/installer"));
}

TEST(ImageVerificationTest, TheFirstMatchingRuleDecidesAndIsNamedByItsIndex) {
  const std::vector<ImageVerificationRuleSpec> rules = {
      {.image = "ghcr.io/siderolabs/kubelet", .deny = false, .skip = true},
      {.image = "ghcr.io/*", .deny = true, .skip = false},
      {.image = "ghcr.io/siderolabs/installer", .deny = false, .skip = true},
  };
  EXPECT_TRUE(VerifyImage(rules, "ghcr.io/siderolabs/kubelet").ok());
  absl::Status denied = VerifyImage(rules, "ghcr.io/siderolabs/installer");
  EXPECT_EQ(denied.code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(denied.message(), "verification denied by matched rule (0001)");
  EXPECT_TRUE(VerifyImage(rules, "factory.talos.dev/installer/abc").ok());  // no rule: allowed
}

TEST(ImageVerificationTest, RulesRoundTripThroughTheConfigDocument) {
  const std::vector<ImageVerificationRuleSpec> rules = {
      {.image = "docker.io/*", .deny = false, .skip = true},
      {.image = "factory.talos.dev/*", .deny = true, .skip = false},
  };
  const std::string config = "version: v1alpha1\nmachine:\n  type: worker\n" +
                             ImageVerificationDocument(rules) +
                             "---\napiVersion: v1alpha1\nkind: KubeletConfig\nimage: x\n";
  auto read = ReadImageVerificationRules(config);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].image, "docker.io/*");
  EXPECT_TRUE(read[0].skip);
  EXPECT_TRUE(read[1].deny);
  EXPECT_TRUE(ReadImageVerificationRules("version: v1alpha1\n").empty());
  EXPECT_EQ(ImageVerificationDocument({}), "");
}

}  // namespace
}  // namespace tr::sim
