#include "core/fence.h"

#include <gtest/gtest.h>

#include "core/status_decode.h"
#include "core/status_yaml.h"

namespace tr::core {
namespace {

TEST(FenceTest, ANewerGenerationOrARivalAtTheSameOneRefuses) {
  const Fence ours{3, "pod-a"};
  EXPECT_EQ(FenceRefusal(std::nullopt, ours), "");
  EXPECT_EQ(FenceRefusal(Fence{2, "pod-b"}, ours), "");
  EXPECT_EQ(FenceRefusal(Fence{3, "pod-a"}, ours), "");
  EXPECT_EQ(FenceRefusal(Fence{3, "pod-b"}, ours),
            "the status branch holds generation 3 of pod-b and this replica writes generation 3 "
            "of pod-a: another replica took the cluster over");
  EXPECT_NE(FenceRefusal(Fence{4, "pod-a"}, ours), "");
  EXPECT_EQ(FenceRefusal(Fence{4, "pod-b"}, std::nullopt), "");
  EXPECT_EQ(FenceRefusal(Fence{kMaxFenceGeneration, "mallory"}, ours), "");
}

TEST(FenceTest, TheNextGenerationFollowsTheRecordedOneAndStopsAtTheCeiling) {
  EXPECT_EQ(NextFenceGeneration(std::nullopt), 1u);
  EXPECT_EQ(NextFenceGeneration(Fence{7, "pod-a"}), 8u);
  EXPECT_EQ(NextFenceGeneration(Fence{kMaxFenceGeneration, "m"}), kMaxFenceGeneration);
}

TEST(FenceTest, IsWrittenToTheStatusFileReadBackAndNotPartOfItsContent) {
  ClusterStatus status;
  status.cluster = "prod";
  status.fence = Fence{12, "talos-reconciler-7d9f-x2"};
  const std::string text = RenderStatusYaml(status);
  EXPECT_NE(text.find("fence: {generation: 12, holder: \"talos-reconciler-7d9f-x2\"}"),
            std::string::npos)
      << text;
  Decoded<ClusterStatus> read = DecodeClusterStatus("status/prod.yaml", text);
  ASSERT_TRUE(read.ok()) << read.diagnostics.front().ToString();
  EXPECT_EQ(read.value->fence, status.fence);
  ClusterStatus unfenced = status;
  unfenced.fence.reset();
  EXPECT_EQ(RenderStatusYaml(unfenced).find("fence"), std::string::npos);
  EXPECT_FALSE(StatusChanged(status, unfenced));
}

// (A generation beyond 2^53 - 1 is no fence, the rest of the file read: StatusYamlTest.)
TEST(FenceTest, AFenceOutOfRangeMakesTheFileNoStatus) {
  ClusterStatus status;
  status.cluster = "prod";
  const std::string valid = RenderStatusYaml(status);
  const std::string header = "cluster: \"prod\"\n";
  ASSERT_NE(valid.find(header), std::string::npos) << valid;
  for (const std::string fence :
       {"{generation: 0, holder: a}",
        "{generation: -1, holder: a}", "{generation: 1, holder: \"\"}", "{generation: 1}",
        "{generation: 1, holder: a, term: 2}", "7"}) {
    std::string text = valid;
    text.insert(text.find(header) + header.size(), "fence: " + fence + "\n");
    EXPECT_FALSE(DecodeClusterStatus("status/prod.yaml", text).ok()) << fence;
  }
}

}  // namespace
}  // namespace tr::core
