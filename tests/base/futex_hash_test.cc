// The process's private futex hash, grown for its threads (Linux 6.16 and later).
#include "base/futex_hash.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>

#include <bit>
#include <latch>
#include <thread>
#include <vector>

namespace tr {
namespace {

// The buckets of the process's futex hash as the kernel reports them; < 0 without a private one.
int BucketsNow() { return prctl(/*PR_FUTEX_HASH=*/78, /*GET_SLOTS=*/2, 0, 0, 0); }

// Runs `body` while `threads` more threads wait on a latch (a futex each).
template <typename Body>
void WithWaitingThreads(int threads, Body body) {
  std::latch release(1);
  std::vector<std::jthread> waiting;
  for (int i = 0; i < threads; ++i) waiting.emplace_back([&] { release.wait(); });
  body();
  release.count_down();
}

// What a kernel without a private hash answers: an error that says so, and the kernel agrees.
void ExpectNoPrivateHash(const absl::Status& status) {
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("PR_FUTEX_HASH"), std::string::npos) << status;
  EXPECT_LT(BucketsNow(), 0);
}

TEST(FutexHashTest, GrowsToFourBucketsAThreadAndNeverShrinks) {
  WithWaitingThreads(300, [] {
    const int before = BucketsNow();
    // The threads counted now: 301 or more (this one, the 300 waiting, gtest's).
    absl::StatusOr<int> grown = GrowFutexHash();
    if (!grown.ok()) return ExpectNoPrivateHash(grown.status());
    if (before < 4 * 301) {
      EXPECT_GE(*grown, 4 * 301);
      EXPECT_LE(*grown, 2 * 4 * 400);
    } else {
      EXPECT_EQ(*grown, before);  // already larger (another test of this process grew it)
    }
    EXPECT_TRUE(std::has_single_bit(static_cast<unsigned>(*grown))) << *grown;
    EXPECT_EQ(BucketsNow(), *grown);
    // And 4,000 threads to come.
    absl::StatusOr<int> ahead = GrowFutexHash(4000);
    ASSERT_TRUE(ahead.ok()) << ahead.status();
    EXPECT_GE(*ahead, 4 * 4301);
    EXPECT_EQ(BucketsNow(), *ahead);
    // Fewer threads than it is sized for: left as it is.
    absl::StatusOr<int> again = GrowFutexHash();
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *ahead);
    EXPECT_EQ(BucketsNow(), *ahead);
  });
}

TEST(FutexHashTest, StopsAtSixtyFiveThousandBuckets) {
  absl::StatusOr<int> grown = GrowFutexHash(1 << 20);
  if (!grown.ok()) return ExpectNoPrivateHash(grown.status());
  EXPECT_EQ(*grown, 1 << 16);
  EXPECT_EQ(BucketsNow(), 1 << 16);
}

}  // namespace
}  // namespace tr
