// A pull request's head for a plan preview: fetched by its ref from the configured remote, read
// without touching the desired-state branch, and kept through compaction by a preview ref.
#include <gtest/gtest.h>

#include "gitsource/git_source.h"
#include "tests/gitsource/fixture.h"

namespace tr::gitsource::testing {
namespace {

class PreviewTest : public UpstreamTest {
 protected:
  // Commits `content` as the staging profile on a side branch and publishes it as `ref`.
  std::string PublishHead(const std::string& ref, const std::string& content) {
    const std::string head =
        upstream_.Commit({{"clusters/staging.yaml", content}}, "proposal", "proposal");
    upstream_.Git({"push", "-q", "-f", "origin", "proposal:" + ref});
    upstream_.Git({"checkout", "-q", "main"});
    return head;
  }
};

TEST_F(PreviewTest, FetchesPullAndMergeRequestHeadsWithoutMovingTheBranch) {
  auto source = OpenSource(Config("file://" + upstream_.bare().string()));
  ASSERT_NE(source, nullptr);
  const std::string github = PublishHead("refs/pull/7/head", "kind: a\n");
  absl::StatusOr<ProfileSnapshot> pull = source->FetchPreview("refs/pull/7/head", {});
  ASSERT_TRUE(pull.ok()) << pull.status();
  EXPECT_EQ(pull->origin.commit, github);
  ASSERT_EQ(pull->files.size(), 3u);
  EXPECT_EQ(pull->files[1].content, "kind: a\n");

  const std::string gitlab = PublishHead("refs/merge-requests/3/head", "kind: b\n");
  absl::StatusOr<ProfileSnapshot> merge = source->FetchPreview("refs/merge-requests/3/head", {});
  ASSERT_TRUE(merge.ok()) << merge.status();
  EXPECT_EQ(merge->origin.commit, gitlab);
  // The watched branch is what a poll sees, whatever previews were fetched.
  absl::StatusOr<RemoteHead> head = source->Poll();
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->commit, desired_tip_);
}

TEST_F(PreviewTest, RefusesOtherRefsAndReportsMissingOnes) {
  auto source = OpenSource(Config("file://" + upstream_.bare().string()));
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->FetchPreview("refs/heads/main", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source->FetchPreview("refs/pull/7/head:refs/heads/main", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source->FetchPreview("refs/pull/99/head", {}).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tr::gitsource::testing
