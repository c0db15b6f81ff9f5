// What an HTTP answer means, read in one place for every client: its status's canonical code
// and the delay its Retry-After asks for.
#include "base/http_outcome.h"

#include <gtest/gtest.h>

#include <string>

namespace tr {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(HttpOutcomeTest, EachCodeSaysWhatTheCallerShouldDo) {
  const struct {
    int status;
    absl::StatusCode code;
  } cases[] = {
      {200, absl::StatusCode::kOk},
      {204, absl::StatusCode::kOk},
      {302, absl::StatusCode::kInternal},
      {400, absl::StatusCode::kInvalidArgument},
      {401, absl::StatusCode::kUnauthenticated},
      {403, absl::StatusCode::kPermissionDenied},
      {404, absl::StatusCode::kNotFound},
      {409, absl::StatusCode::kAborted},
      {422, absl::StatusCode::kInvalidArgument},
      {429, absl::StatusCode::kResourceExhausted},
      {500, absl::StatusCode::kUnavailable},
      {503, absl::StatusCode::kUnavailable},
      {599, absl::StatusCode::kUnavailable},
      {600, absl::StatusCode::kInternal},
      {0, absl::StatusCode::kInternal},
  };
  for (const auto& c : cases) {
    const std::string message = "GET /v2/: HTTP " + std::to_string(c.status);
    const HttpOutcome outcome = HttpOutcome::Of(c.status);
    EXPECT_EQ(outcome.Code(), c.code) << c.status;
    const absl::Status status = outcome.Error(message);
    EXPECT_EQ(status.code(), c.code) << c.status;
    EXPECT_EQ(status.message(), status.ok() ? "" : message);
    EXPECT_EQ(outcome.Succeeded(), c.code == absl::StatusCode::kOk) << c.status;
    EXPECT_EQ(outcome.RateLimited(), c.status == 429) << c.status;
    EXPECT_EQ(outcome.ServerTrouble(), c.code == absl::StatusCode::kUnavailable) << c.status;
    EXPECT_EQ(outcome.Ok200(), c.status == 200) << c.status;
    EXPECT_EQ(outcome.Redirected(), c.status == 302) << c.status;
  }
}

TEST(HttpOutcomeTest, RetryAfterIsSecondsAndAnythingElseIsNone) {
  EXPECT_EQ(HttpOutcome::Of(429, "7").retry_after, milliseconds(7000));
  EXPECT_EQ(HttpOutcome::Of(429, "0").retry_after, milliseconds(0));
  EXPECT_EQ(HttpOutcome::Of(429, "1.5").retry_after, milliseconds(1500));
  EXPECT_EQ(HttpOutcome::Of(429, "").retry_after, std::nullopt);
  EXPECT_EQ(HttpOutcome::Of(429, "-5").retry_after, std::nullopt);
  EXPECT_EQ(HttpOutcome::Of(429, "nan").retry_after, std::nullopt);
  EXPECT_EQ(HttpOutcome::Of(503, "Wed, 21 Oct 2026 07:28:00 GMT").retry_after, std::nullopt);
  // A huge value is clamped, not overflowed.
  EXPECT_EQ(HttpOutcome::Of(429, "9223372036854775807").retry_after,
            milliseconds(HttpOutcome::kMaxRetryAfter));
  EXPECT_EQ(HttpOutcome::Of(429, "1e300").retry_after, milliseconds(HttpOutcome::kMaxRetryAfter));
}

TEST(HttpOutcomeTest, TheHeaderIsFoundWhateverItsCase) {
  EXPECT_EQ(HttpOutcome::Of(429, httplib::Headers{{"retry-after", "3"}}).retry_after,
            milliseconds(3000));
  EXPECT_EQ(HttpOutcome::Of(429, httplib::Headers{{"Retry-After", "4"}}).retry_after,
            milliseconds(4000));
  EXPECT_EQ(HttpOutcome::Of(429, httplib::Headers{{"X-Other", "4"}}).retry_after, std::nullopt);
}

TEST(HttpOutcomeTest, EachClientClampsTheWaitItWillKeep) {
  const HttpOutcome asked = HttpOutcome::Of(429, "3600");
  EXPECT_EQ(asked.RetryAfterOr(milliseconds(1000), std::chrono::minutes(10)),
            std::chrono::minutes(10));
  EXPECT_EQ(asked.RetryAfterOr(milliseconds(1000), std::chrono::hours(2)), std::chrono::hours(1));
  EXPECT_EQ(HttpOutcome::Of(429).RetryAfterOr(milliseconds(1000), std::chrono::minutes(10)),
            milliseconds(1000));
}

TEST(ParseDelaySecondsTest, ClampsToTheMaximumItIsGiven) {
  EXPECT_EQ(ParseDelaySeconds("0.25", seconds(10)), milliseconds(250));
  EXPECT_EQ(ParseDelaySeconds("11", seconds(10)), milliseconds(10000));
  EXPECT_EQ(ParseDelaySeconds("soon", seconds(10)), std::nullopt);
}

}  // namespace
}  // namespace tr
