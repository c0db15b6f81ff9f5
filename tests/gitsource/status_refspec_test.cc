// The one push refspec: built in one place, and nothing else passes its check.
#include "gitsource/status_refspec.h"

#include <gtest/gtest.h>

namespace tr::gitsource {
namespace {

TEST(StatusRefspecTest, BuildsTheOnlyRefspec) {
  absl::StatusOr<std::string> refspec = StatusPushRefspec("talos-reconciler/status", "main");
  ASSERT_TRUE(refspec.ok()) << refspec.status();
  EXPECT_EQ(*refspec, "refs/talos-reconciler/status-outgoing:refs/heads/talos-reconciler/status");
  EXPECT_TRUE(CheckStatusPushRefspec(*refspec, "talos-reconciler/status", "main").ok());
}

TEST(StatusRefspecTest, RefusesTheDesiredBranchAndBadNames) {
  for (const std::string status : {"main", "main/status", "", "a..b", "-x", "x.lock", "a b"}) {
    EXPECT_EQ(StatusPushRefspec(status, "main").status().code(), absl::StatusCode::kInvalidArgument)
        << status;
  }
  EXPECT_EQ(StatusPushRefspec("status", "status/main").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StatusRefspecTest, CheckRefusesEverythingElse) {
  const std::string outgoing(kStatusOutgoingRef);
  for (const std::string& refspec : std::vector<std::string>{
           "+" + outgoing + ":refs/heads/talos-reconciler/status", outgoing + ":refs/heads/main",
           outgoing + ":refs/heads/talos-reconciler/*",
           std::string("refs/heads/main:refs/heads/talos-reconciler/status"),
           outgoing + ":refs/tags/talos-reconciler/status",
           outgoing + ":refs/heads/talos-reconciler/status ", ":refs/heads/talos-reconciler/status",
           outgoing + ":refs/heads/talos-reconciler/status:extra"}) {
    EXPECT_EQ(CheckStatusPushRefspec(refspec, "talos-reconciler/status", "main").code(),
              absl::StatusCode::kFailedPrecondition)
        << refspec;
  }
  // Even the right shape is refused when the status branch is the desired branch.
  EXPECT_EQ(CheckStatusPushRefspec(outgoing + ":refs/heads/main", "main", "main").code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tr::gitsource
