// The forge REST clients against the fake forge over loopback HTTP: every request the client
// makes is checked by the fake (GitHub's against @octokit/openapi's description), so a test
// here fails when the client drifts from the real API.
#include "reconciler/clients/forge/forge_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "reconciler/features/pull_requests/pr_comments.h"
#include "reconciler/runtime/logging.h"
#include "spdlog/sinks/ostream_sink.h"
#include "tests/forge/forge_test_support.h"
#include "tests/support/fake_forge.h"
#include "tests/support/openapi_check.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::forge {
namespace {

using forge_test::FakeForge;
using forge_test::FakeResponse;
using pull_requests::kCommentMarker;
using pull_requests::PullRequestComments;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "ghp_s3cr3tT0kenNeverLogged";
constexpr char kSha[] = "0123456789abcdef0123456789abcdef01234567";

using forge_test::RecordingTime;

std::unique_ptr<HttpForgeClient> ClientFor(const FakeForge& fake, const std::string& forge,
                                           RecordingTime& time, int per_minute = 40) {
  return forge_test::FakeForgeClient(fake, forge, kToken, time, per_minute);
}

class ForgeClientTest : public testing::TestWithParam<std::string> {};

TEST_P(ForgeClientTest, FindsCreatesAndEditsTheMarkedCommentAndSetsStatuses) {
  FakeForge fake(GetParam(), "acme/fleet", kToken);
  RecordingTime time;
  auto client = ClientFor(fake, GetParam(), time);
  fake.AddForeignComment(7, "LGTM");
  std::stop_source stop;
  auto none = client->FindComment(7, "<!-- mark -->", stop.get_token());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  auto id = client->CreateComment(7, "<!-- mark -->\nplan v1", stop.get_token());
  ASSERT_TRUE(id.ok()) << id.status();
  auto found = client->FindComment(7, "<!-- mark -->", stop.get_token());
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->id, *id);
  EXPECT_TRUE(client->EditComment(7, *id, "<!-- mark -->\nplan v2", stop.get_token()).ok());
  ASSERT_EQ(fake.Comments(7).size(), 2u);
  EXPECT_EQ(fake.Comments(7)[1].body, "<!-- mark -->\nplan v2");
  EXPECT_EQ(fake.Comments(7)[1].edits, 1);

  CommitStatus status{kSha, "talos-reconciler/plan", CommitState::kFailure, std::string(200, 'x'),
                      "https://example.test/status"};
  EXPECT_TRUE(client->SetCommitStatus(status, stop.get_token()).ok());
  auto statuses = fake.Statuses(kSha);
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].context, "talos-reconciler/plan");
  EXPECT_EQ(statuses[0].state, GetParam() == "gitlab" ? "failed" : "failure");
  EXPECT_EQ(statuses[0].description.size(), 140u);  // GitHub's limit
  EXPECT_TRUE(fake.Violations().empty());
}

TEST_P(ForgeClientTest, FindsTheMergedPullRequestOfACommit) {
  FakeForge fake(GetParam(), "acme/fleet", kToken);
  RecordingTime time;
  auto client = ClientFor(fake, GetParam(), time);
  fake.SetMergedPull(kSha, 42);
  auto pull = client->MergedPullOf(kSha, {});
  ASSERT_TRUE(pull.ok()) << pull.status();
  if (GetParam() == "gitea") {
    EXPECT_FALSE(pull->has_value());  // Gitea has no such call: the webhook tells
    EXPECT_TRUE(fake.Requests().empty());
  } else {
    EXPECT_EQ(*pull, std::optional<int64_t>(42));
  }
}

TEST_P(ForgeClientTest, PublishedCommentsAreOneCommentEditedAtMostOncePerInterval) {
  FakeForge fake(GetParam(), "acme/fleet", kToken);
  RecordingTime time;
  auto client = ClientFor(fake, GetParam(), time);
  test_support::SimulatedEnv env;
  PullRequestComments comments(*client, milliseconds(300), env);
  comments.Publish(9, "plan 1");
  for (int i = 2; i <= 6; ++i) comments.Publish(9, "plan " + std::to_string(i));
  // The writer's one thread, its pacing in simulated time.
  ASSERT_TRUE(env.RunTimersUntil(1, [&] { return comments.Idle(); }));
  const auto written = fake.Comments(9);
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0].body, std::string(kCommentMarker) + "\nplan 6");
  EXPECT_LE(written[0].edits, 1);  // six bodies, at most one create and one edit
}

INSTANTIATE_TEST_SUITE_P(Forges, ForgeClientTest, testing::Values("github", "gitlab", "gitea"),
                         [](const auto& p) { return p.param; });

TEST(ForgeClientRateLimitTest, SecondaryLimitWaitsRetryAfterThenSucceeds) {
  FakeForge fake("github", "acme/fleet", kToken);
  RecordingTime time;
  auto client = ClientFor(fake, "github", time);
  fake.Inject(
      {403, {{"retry-after", "7"}}, R"({"message":"You have exceeded a secondary rate limit."})"});
  EXPECT_TRUE(client->CreateComment(3, "hello", {}).ok());
  EXPECT_THAT(time.slept, ElementsAre(seconds(7)));
  EXPECT_EQ(fake.Comments(3).size(), 1u);
}

TEST(ForgeClientRateLimitTest, ExhaustedPrimaryLimitWaitsUntilTheReset) {
  FakeForge fake("github", "acme/fleet", kToken);
  RecordingTime time;
  auto client = ClientFor(fake, "github", time);
  const int64_t reset = 1'800'000'030;  // 30 s after RecordingTime's start
  fake.Inject({429,
               {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", std::to_string(reset)}},
               R"({"message":"API rate limit exceeded"})"});
  EXPECT_TRUE(client->SetCommitStatus({kSha, "c", CommitState::kPending, "d", ""}, {}).ok());
  // The retry waits out the reset (plus a second); the pacing then finds the reset passed.
  EXPECT_THAT(time.slept, ElementsAre(seconds(31)));
}

TEST(ForgeClientRateLimitTest, AForbiddenThatIsNoLimitIsNotRetried) {
  FakeForge fake("github", "acme/fleet", kToken);
  RecordingTime time;
  auto client = ClientFor(fake, "github", time);
  fake.Inject({403, {}, R"({"message":"Resource not accessible by integration"})"});
  EXPECT_EQ(client->CreateComment(3, "x", {}).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(time.slept.empty());
}

TEST(ForgeClientRateLimitTest, GivesUpAfterMaxAttemptsAsUnavailable) {
  FakeForge fake("github", "acme/fleet", kToken);
  RecordingTime time;
  auto client = ClientFor(fake, "github", time);
  fake.Inject({403, {}, R"({"message":"You have exceeded a secondary rate limit"})"}, 4);
  EXPECT_EQ(client->CreateComment(3, "x", {}).status().code(), absl::StatusCode::kUnavailable);
  // No retry-after and no reset: a minute, doubling.
  EXPECT_THAT(time.slept, ElementsAre(seconds(60), seconds(120), seconds(240)));
  EXPECT_TRUE(fake.Comments(3).empty());
}

TEST(ForgeClientRateLimitTest, ContentCreatingRequestsArePacedPerMinute) {
  FakeForge fake("github", "acme/fleet", kToken);
  RecordingTime time;
  auto client = ClientFor(fake, "github", time, /*per_minute=*/2);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->CreateComment(5, "c", {}).ok());
  EXPECT_THAT(time.slept, ElementsAre(seconds(60)));
  EXPECT_TRUE(client->FindComment(5, "nothing", {}).ok());  // reads are not paced
  EXPECT_EQ(time.slept.size(), 1u);
}

TEST(ForgeClientRetryTest, ServerErrorsAreRetriedAfterAJitteredDoublingBackoff) {
  FakeForge fake("github", "acme/fleet", kToken);
  RecordingTime time;  // Uniform() is 0.5: half the fixed half of each step is added
  auto client = ClientFor(fake, "github", time);
  fake.Inject({502, {}, "bad gateway"}, 3);
  EXPECT_TRUE(client->CreateComment(5, "c", {}).ok());
  EXPECT_THAT(time.slept, ElementsAre(milliseconds(750), milliseconds(1500), milliseconds(3000)));
}

TEST(ForgeClientRateLimitTest, RateLimitDelayFollowsTheHeaders) {
  const auto now = std::chrono::system_clock::time_point(seconds(1000));
  EXPECT_EQ(RateLimitDelay(429, {{"retry-after", "3"}}, "", now, 1), milliseconds(3000));
  EXPECT_EQ(RateLimitDelay(403, {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "1010"}}, "",
                           now, 1),
            milliseconds(11000));
  EXPECT_EQ(RateLimitDelay(429, {}, "", now, 2), milliseconds(120000));
  EXPECT_EQ(RateLimitDelay(403, {}, "Bad permissions", now, 1), std::nullopt);
  EXPECT_EQ(RateLimitDelay(503, {}, "", now, 1), std::nullopt);  // not a limit: backoff
  EXPECT_EQ(RateLimitDelay(404, {}, "", now, 1), std::nullopt);
}

TEST(ForgeClientRateLimitTest, WaitsAServerAsksForAreClamped) {
  const auto now = std::chrono::system_clock::time_point(seconds(1000));
  using Headers = std::map<std::string, std::string>;
  // A reset a year ahead, and one at the end of int64 (no overflow): fifteen minutes.
  for (const char* reset : {"31537000", "9223372036854775807"}) {
    const Headers limited{{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", reset}};
    EXPECT_EQ(RateLimitedUntil(limited, now), now + kMaxRateLimitWait) << reset;
    EXPECT_EQ(RateLimitDelay(403, limited, "", now, 1), milliseconds(kMaxRateLimitWait)) << reset;
  }
  EXPECT_EQ(RateLimitDelay(429, {{"retry-after", "9223372036854775807"}}, "", now, 1),
            milliseconds(kMaxRateLimitWait));
  // A negative Retry-After is no delay (base/http_outcome.h): the limit waits a minute.
  EXPECT_EQ(RateLimitDelay(429, {{"retry-after", "-5"}}, "", now, 1), milliseconds(60000));
  // A reset in the past blocks nothing; one within the clamp is kept as it is.
  const Headers past{{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "10"}};
  EXPECT_EQ(RateLimitedUntil(past, now), std::nullopt);
  EXPECT_EQ(RateLimitDelay(403, past, "", now, 1), milliseconds(1000));
  EXPECT_EQ(RateLimitedUntil({{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "1010"}}, now),
            std::chrono::system_clock::time_point(seconds(1010)));
  EXPECT_EQ(RateLimitedUntil({{"x-ratelimit-remaining", "1"}, {"x-ratelimit-reset", "1010"}}, now),
            std::nullopt);
}

TEST(ForgeClientRateLimitTest, AResetCenturiesAheadPausesTheClientFifteenMinutesOnly) {
  FakeForge fake("github", "acme/fleet", kToken);
  RecordingTime time;
  auto client = ClientFor(fake, "github", time);
  fake.Inject({429,
               {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "99999999999"}},
               R"({"message":"API rate limit exceeded"})"});
  EXPECT_TRUE(client->SetCommitStatus({kSha, "c", CommitState::kPending, "d", ""}, {}).ok());
  EXPECT_THAT(time.slept, ElementsAre(milliseconds(kMaxRateLimitWait)));
  EXPECT_TRUE(client->SetCommitStatus({kSha, "c", CommitState::kSuccess, "d", ""}, {}).ok());
  EXPECT_EQ(time.slept.size(), 1u);  // the clamped block is over
}

TEST(ForgeClientAnswerCapTest, AnAnswerOverTheCapIsRefusedNamingIt) {
  FakeForge fake("github", "acme/fleet", kToken);
  RecordingTime time;
  auto client = ClientFor(fake, "github", time);
  const std::string huge = "[" + std::string(9 << 20, ' ') + "]";  // 9 MiB of valid JSON
  fake.Inject({200, {}, huge});
  const absl::Status refused = client->FindComment(7, "<!-- mark -->", {}).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("cap of 8388608 bytes (8 MiB)"));
  EXPECT_TRUE(time.slept.empty());  // not retried: the same answer would come again
  fake.Inject({200, {}, "[" + std::string(7 << 20, ' ') + "]"});  // under the cap: read
  EXPECT_TRUE(client->FindComment(7, "<!-- mark -->", {}).ok());
}

TEST(ForgeClientTokenTest, TheTokenIsSentButNeverLogged) {
  std::ostringstream log_text;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text);
  auto log = ModuleLogger("forge");
  log->sinks().push_back(sink);
  log->set_level(spdlog::level::trace);
  {
    FakeForge fake("gitea", "acme/fleet", kToken);
    RecordingTime time;
    auto client = ClientFor(fake, "gitea", time);
    fake.Inject({500, {}, "oops"});
    EXPECT_TRUE(client->CreateComment(1, "body", {}).ok());
    EXPECT_THAT(fake.Transcript(), HasSubstr(std::string("token ") + kToken));
  }
  {
    FakeForge wrong("github", "acme/fleet", "another-token");
    RecordingTime time;
    auto client = ClientFor(wrong, "github", time);
    EXPECT_EQ(client->CreateComment(1, "body", {}).status().code(),
              absl::StatusCode::kUnauthenticated);
  }
  log->flush();
  log->sinks().pop_back();
  log->set_level(spdlog::level::info);
  EXPECT_THAT(log_text.str(), HasSubstr("step=forge-call"));
  EXPECT_THAT(log_text.str(), Not(HasSubstr(kToken)));
}

TEST(ForgeClientCreateTest, RefusesABadBaseUrlOrAnEmptyToken) {
  RecordingTime time;
  ForgeClientOptions options{{FindApiDialect("github"), "acme/fleet"}, "api.github.com", kToken};
  EXPECT_EQ(HttpForgeClient::Create(options, time).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.api_url = "https://api.github.com";
  options.token.clear();
  EXPECT_EQ(HttpForgeClient::Create(options, time).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The check the fake forge applies is not vacuous: requests GitHub would refuse are named.
TEST(GithubOpenApiTest, RefusesWhatGithubWouldRefuse) {
  const auto& spec = forge_test::GithubOpenApi::Installed();
  const std::map<std::string, std::string> headers{{"accept", "application/vnd.github+json"},
                                                   {"x-github-api-version", "2022-11-28"},
                                                   {"authorization", "Bearer t"},
                                                   {"user-agent", "x"},
                                                   {"content-type", "application/json"}};
  const std::string status = std::string("/repos/o/r/statuses/") + kSha;
  EXPECT_TRUE(
      spec.Check({"POST", status, {}, headers, R"({"state":"success","context":"c"})"}).empty());
  EXPECT_THAT(spec.Check({"POST", status, {}, headers, R"({"state":"done"})"}),
              ElementsAre(HasSubstr("is not one of")));
  EXPECT_THAT(spec.Check({"POST", status, {}, headers, R"({"context":"c","name":"n"})"}),
              ElementsAre(HasSubstr("required field state"), HasSubstr("field name is not in")));
  EXPECT_THAT(spec.Check({"PUT", "/repos/o/r/issues/comments/5", {}, headers, R"({"body":"b"})"}),
              ElementsAre(HasSubstr("is no operation")));
  EXPECT_THAT(
      spec.Check({"PATCH", "/repos/o/r/issues/comments/abc", {}, headers, R"({"body":"b"})"}),
      ElementsAre(HasSubstr("comment_id")));
  EXPECT_THAT(spec.Check({"GET", "/repos/o/r/issues/1/comments", {{"limit", "5"}}, headers, ""}),
              ElementsAre(HasSubstr("query limit is not declared")));
  EXPECT_THAT(spec.Check({"POST", "/repos/o/r/issues/1/comments", {}, {}, R"({"body":"b"})"}),
              testing::Contains(HasSubstr("Accept")));
}

}  // namespace
}  // namespace tr::reconciler::forge
