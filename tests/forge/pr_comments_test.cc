// PullRequestComments remembers a bounded number of pull requests: a daemon that comments on
// thousands over the years keeps the newest, and a forgotten one's next body still edits its
// one comment (found again by the marker) instead of adding a second.
#include "reconciler/features/pull_requests/pr_comments.h"

#include <map>
#include <set>

#include "gtest/gtest.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::pull_requests {
namespace {

using forge::CommitStatus;
using forge::ForgeApi;
using forge::ForgeComment;
using test_support::SimulatedEnv;

// The forge's comments in memory; counts the finds of each pull request, and refuses every
// write of the pull requests in `down` (a forge that cannot be reached for them).
class MemoryForge final : public ForgeApi {
 public:
  absl::StatusOr<std::optional<ForgeComment>> FindComment(int64_t number, std::string_view marker,
                                                          std::stop_token) override {
    MutexLock lock(mu_);
    ++finds_[number];
    if (down_.contains(number)) return absl::UnavailableError("forge down");
    for (const auto& [id, comment] : comments_) {
      if (comment.first == number && comment.second.find(marker) != std::string::npos) {
        return ForgeComment{.id = id, .body = comment.second};
      }
    }
    return std::nullopt;
  }
  absl::StatusOr<int64_t> CreateComment(int64_t number, const std::string& body,
                                        std::stop_token) override {
    MutexLock lock(mu_);
    if (down_.contains(number)) return absl::UnavailableError("forge down");
    comments_[++next_id_] = {number, body};
    return next_id_;
  }
  absl::Status EditComment(int64_t number, int64_t id, const std::string& body,
                           std::stop_token) override {
    MutexLock lock(mu_);
    if (down_.contains(number)) return absl::UnavailableError("forge down");
    comments_[id] = {number, body};
    return absl::OkStatus();
  }
  absl::Status SetCommitStatus(const CommitStatus&, std::stop_token) override {
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<int64_t>> MergedPullOf(const std::string&,
                                                      std::stop_token) override {
    return std::nullopt;
  }
  // Comments only: these tests open no pull request.
  absl::StatusOr<std::vector<forge::ForgePull>> PullsFromBranch(const std::string&,
                                                                std::stop_token) override {
    return std::vector<forge::ForgePull>();
  }
  absl::StatusOr<forge::ForgePull> CreatePull(const forge::PullDraft&, std::stop_token) override {
    return absl::UnimplementedError("MemoryForge keeps comments only");
  }
  absl::Status EditPull(int64_t, const std::string&, const std::string&, std::stop_token) override {
    return absl::UnimplementedError("MemoryForge keeps comments only");
  }

  void SetDown(int64_t number, bool down) {
    MutexLock lock(mu_);
    if (down) {
      down_.insert(number);
    } else {
      down_.erase(number);
    }
  }
  int Finds(int64_t number) {
    MutexLock lock(mu_);
    return finds_[number];
  }
  // The bodies of pull request `number`'s comments, oldest first.
  std::vector<std::string> Bodies(int64_t number) {
    MutexLock lock(mu_);
    std::vector<std::string> bodies;
    for (const auto& [id, comment] : comments_) {
      if (comment.first == number) bodies.push_back(comment.second);
    }
    return bodies;
  }

 private:
  Mutex mu_;
  std::map<int64_t, std::pair<int64_t, std::string>> comments_ ABSL_GUARDED_BY(mu_);  // by id
  std::map<int64_t, int> finds_ ABSL_GUARDED_BY(mu_);
  std::set<int64_t> down_ ABSL_GUARDED_BY(mu_);
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
};

std::string Shown(const std::string& body) { return std::string(kCommentMarker) + "\n" + body; }

constexpr size_t kCap = 4;

TEST(PullRequestCommentsTest, RemembersAtMostTheCapAndAForgottenOneIsFoundAgainNotDuplicated) {
  MemoryForge forge;
  SimulatedEnv clock;
  PullRequestComments comments(forge, std::chrono::milliseconds(0), clock, kCap);
  for (int64_t number = 1; number <= 10; ++number) {
    comments.Publish(number, "plan " + std::to_string(number));
    ASSERT_TRUE(clock.RunTimersUntil(1, [&] { return comments.Idle(); }));
  }
  EXPECT_EQ(comments.Remembered(), kCap);
  // The newest is remembered: edited in place without looking for it again.
  comments.Publish(10, "rollout of 10");
  ASSERT_TRUE(clock.RunTimersUntil(1, [&] { return comments.Idle(); }));
  EXPECT_EQ(forge.Finds(10), 1);
  EXPECT_EQ(forge.Bodies(10), std::vector<std::string>{Shown("rollout of 10")});
  // The oldest was forgotten: found again by its marker, and still one comment.
  comments.Publish(1, "rollout of 1");
  ASSERT_TRUE(clock.RunTimersUntil(1, [&] { return comments.Idle(); }));
  EXPECT_EQ(forge.Finds(1), 2);
  EXPECT_EQ(forge.Bodies(1), std::vector<std::string>{Shown("rollout of 1")});
  EXPECT_EQ(comments.Remembered(), kCap);
}

TEST(PullRequestCommentsTest, AnUnwrittenBodyOutlivesNewerWrittenOnes) {
  MemoryForge forge;
  SimulatedEnv clock;
  PullRequestComments comments(forge, std::chrono::milliseconds(1), clock, kCap);
  forge.SetDown(1, true);
  comments.Publish(1, "plan 1");
  for (int64_t number = 2; number <= 10; ++number) {
    comments.Publish(number, "plan " + std::to_string(number));
    ASSERT_TRUE(clock.RunTimersUntil(1, [&] { return !forge.Bodies(number).empty(); }));
  }
  EXPECT_EQ(comments.Remembered(), kCap);
  forge.SetDown(1, false);  // back: the body published before all the others still arrives
  ASSERT_TRUE(clock.RunTimersUntil(1, [&] { return comments.Idle(); }));
  EXPECT_EQ(forge.Bodies(1), std::vector<std::string>{Shown("plan 1")});
}

}  // namespace
}  // namespace tr::reconciler::pull_requests
