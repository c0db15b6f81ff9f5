// Jittered exponential backoff for status push retries.
#include "gitsource/retry.h"

#include <gtest/gtest.h>

namespace tr::gitsource {
namespace {

using std::chrono::milliseconds;

class FixedRandom final : public RandomSource {
 public:
  explicit FixedRandom(double value) : value_(value) {}
  double Uniform() override { return value_; }

 private:
  double value_;
};

TEST(RetryTest, DoublesPerRetryUpToTheCapWithHalfJitter) {
  const BackoffPolicy policy{milliseconds(100), milliseconds(1000), 10};
  FixedRandom none(0.0), all(0.999999), half(0.5);
  EXPECT_EQ(JitteredBackoff(policy, 1, none), milliseconds(50));
  EXPECT_EQ(JitteredBackoff(policy, 1, half), milliseconds(75));
  EXPECT_EQ(JitteredBackoff(policy, 2, none), milliseconds(100));
  EXPECT_EQ(JitteredBackoff(policy, 3, none), milliseconds(200));
  EXPECT_EQ(JitteredBackoff(policy, 4, all), milliseconds(799));
  EXPECT_EQ(JitteredBackoff(policy, 5, none), milliseconds(500));
  EXPECT_EQ(JitteredBackoff(policy, 60, none), milliseconds(500));
  EXPECT_EQ(JitteredBackoff(policy, 60, all), milliseconds(999));
}

TEST(RetryTest, ThreadSleeperWakesWhenStopped) {
  ThreadSleeper sleeper;
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(sleeper.SleepFor(std::chrono::hours(1), stop.get_token()));
  EXPECT_TRUE(sleeper.SleepFor(milliseconds(1), {}));
}

}  // namespace
}  // namespace tr::gitsource
